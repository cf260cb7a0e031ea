"""Scoring: the official GAIA rules, and an LLM judge beside them as a labelled second opinion.

The map (a test holds it to the folder: every module is named here):

* ``official``: the leaderboard's scorer, ported with its signature and licence (the readers
  re-score with it too);
* ``scorer``: ``gaia_scorer``, the task's scorer: which answer a sample gave (its last ``submit``,
  ``FINAL ANSWER:``, or its last message), the official verdict explained, the detection's flags;
* ``judge``: an LLM judge's prompt and its reading of a reply (a leaf the readers share);
* ``judge_scorer``: the same judge as the opt-in ``gaia_judge`` scorer (``inspect score``).
"""
