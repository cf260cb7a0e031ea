"""The agents a GAIA run can have answer its questions.

The map (a test holds it to the folder: every module is named here):

* ``basic``: the default agent, inspect's ``basic_agent`` with ``bash`` and ``submit``, the opt-in
  tools and the guard that ends a plain-text answer or idle turns (``build_agent`` dispatches
  ``-T agent``);
* ``swe``: another agent (``-T agent=``): inspect_swe's Claude Code, Codex CLI, Gemini CLI and
  mini-swe-agent, run in the sample's sandbox through inspect's bridge, their options, the agents
  refused because their web search cannot be switched off, and the model name each is told;
* ``mini_config``: mini-swe-agent's GAIA configuration (its templates say GAIA's task and answer
  rules instead of SWE-bench's);
* ``sizing``: each agent's measured sandbox memory and the warning before a run whose samples at
  once will not fit in the engine's memory.
"""
