"""The questions: GAIA's on-disk layout, where a snapshot comes from, and which a run asks.

The map (a test holds it to the folder: every module is named here):

* ``dataset``: the one place that knows GAIA's layout (splits, levels, the prompt) and turns a
  record into an inspect ``Sample`` with its attachment;
* ``snapshot_files``: a snapshot's files, trusting none (sizes, links, names);
* ``hub``: Hugging Face or ModelScope into the cache, the pinned revision, and every hub error as
  one line;
* ``media``: what a model can see or hear of an attachment, and ``view_file``;
* ``shown``: each sample listed by its question in ``inspect view``, the model asked the unchanged
  prompt (the task's ``setup`` step);
* ``questionset``: the questions a run leaves out or corrects (``-T exclude``, ``-T answers``,
  ``-T question_set``), recorded with their hash;
* ``named_sets``: the named, shipped sets (``question_sets/``: ``text-103``, ``undisputed``).
"""
