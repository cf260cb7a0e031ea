"""The agents that answer: the default agent, and the packaged agent CLIs of ``-T agent=``.

The map (a test holds it to the folder: every module is named here):

* ``basic``: inspect's ``basic_agent`` with ``bash`` and ``submit`` and the opt-in tools, the idle
  and plain-text-answer guard, and ``build_agent``, which picks the agent a run's options name;
* ``swe``: Claude Code, Codex CLI and mini-swe-agent from inspect_swe, each run in the sample's own
  sandbox with GAIA's answer rules, its model calls bridged to ``--model``.
"""
