"""Plumbing shared by the tests and the benchmarks, never shipped in the wheel.

The scripted OpenAI-compatible model (``scripted_model``), the stand-in answer pages
(``answer_pages``) and the stand-in "internet" that serves them to a run's proxy (``standins``,
``web_standin`` with ``web_pages``), the stand-in web that speaks like the real web (``real_web``:
its server ``real_web_server`` with ``real_web_http`` and ``real_web_pages``, its test CA
``web_ca``, its Chromium driver ``real_web_browser``), the MCP stand-in (``mcp_standin``), the
test scaffold for ``--solver`` (``agents``), the inspect_evals peer runner
(``inspect_evals_gaia``, with ``inspect_evals_shim``), and the generator of the readers' fixtures,
real runs' logs (``real_logs``, with ``real_logs_make``: ``python -m support.real_logs``). Import it
as ``support.<module>`` with the repository root on ``sys.path``: pytest puts it there
(``pythonpath``), and the benchmarks run as modules from the root (``python -m benchmarks.run``).
"""
