"""Plumbing shared by the tests and the benchmarks, never shipped in the wheel.

The scripted OpenAI-compatible model (``scripted_model``), the stand-in answer pages
(``answer_pages``), the test scaffold for ``--solver`` (``agents``) and the inspect_evals peer
runner (``inspect_evals_gaia``, with ``inspect_evals_shim``), and the generator of the readers'
fixtures, real runs' logs (``real_logs``, with ``real_logs_make``: ``python -m support.real_logs``).
Import it as ``support.<module>`` with the repository root on ``sys.path``: pytest puts it there
(``pythonpath``), and the benchmarks run as modules from the root (``python -m benchmarks.run``).
"""
