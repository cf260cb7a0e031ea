"""Reading GAIA runs back: logs and other harnesses' output, their numbers, reports and comparisons.

The one bridge from the task is ``provenance.GaiaProvenance``, the typed record ``task.gaia_task``
writes into every log's task metadata (``record.provenance_of``); everything here reads logs and
never runs a task, and imports nothing of the task's wing but the record's vocabulary and the leaves
(docs/architecture.md lists them; tests/test_imports.py holds the list).

* ``provenance``: the record; ``comparability``: which settings may be pooled and which runs
  are flagged; ``scaffold`` and ``sandbox_ran``: the solver and the sandbox a run really used.
* ``files``: a log (or another harness's output) opened safely, whatever is in it; ``parsed``:
  what a sample costs to parse, its JSON values counted before inspect parses it; ``budget``:
  what all the files of one command may unpack to and keep; ``read``:
  inspect_gaia's own logs, every field checked, ``samples`` each sample of one (its trace cut);
  ``foreign``: inspect_evals' ``gaia`` logs; ``evalscope``: an EvalScope GAIA output folder;
  ``results``: per-sample results of any of them, and runs grouped by model and settings;
  ``coverage``: what a group covers (a ``--limit`` look, one level, a stopped run, every model
  call failed); ``latest``: a folder's newest complete run.
* ``stats`` (accuracy, interval, tokens, cost), ``vote`` (maj@k), ``nearmiss`` and
  ``breakdown`` (where a run fails), ``contamination`` (flagged samples in reports), ``web_reads``
  (what the samples requested on the web, ``-T web_record``, and what a replay served).
* ``web_export`` (a log's recorded web, with its archive's bodies, as HAR: ``web export``) and
  ``web_verify`` (the archive beside a log is the one it names, whole: ``web verify``).
* ``judged`` (answers re-scored by an LLM judge: cache, calls, cost, judged numbers) and
  ``subset`` (a run's official score on a named question set), beside the official score.
* ``probe``: a probe run (``inspect_gaia/gaia_probe``) as a table of routes and one line, and its
  refusal by ``submission`` and ``compare``.
* ``report``: the document ``inspect-gaia report`` renders; ``sidecar``: the note ``inspect-gaia
  submission`` writes beside its file.
* ``sides``, ``leaderboard``, ``paired`` and ``comparison``: any two runs side by side, and the
  document ``inspect-gaia compare`` renders.
"""
