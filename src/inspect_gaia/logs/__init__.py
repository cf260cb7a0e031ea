"""Reading GAIA runs back: logs and other harnesses' output, their numbers, reports and comparisons.

The one bridge from the task is ``provenance.GaiaProvenance``, the typed record ``task.gaia_task``
writes into every log's task metadata; everything here reads logs and never runs a task.

* ``provenance``: the record; ``comparability``: which settings may be pooled and which runs
  are flagged; ``scaffold``: the solver a run really used.
* ``read``: inspect_gaia's own logs, every field checked; ``foreign``: inspect_evals' ``gaia``
  logs; ``results``: per-sample results of any of them, and runs grouped by model and settings.
* ``stats`` (accuracy, interval, tokens, cost), ``vote`` (maj@k), ``nearmiss`` and
  ``breakdown`` (where a run fails), ``contamination`` (flagged samples in reports), ``web_reads``
  (what the samples requested on the web, ``-T web_record``).
* ``report``: the document ``inspect-gaia report`` renders.
* ``sides``, ``leaderboard``, ``paired`` and ``comparison``: any two runs side by side, and the
  document ``inspect-gaia compare`` renders.
"""
