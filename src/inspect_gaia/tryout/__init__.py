"""A first run that needs no key and no dataset: ``inspect-gaia tryout``.

* ``script``: the tryout's model, a script played by inspect's ``mockllm`` that answers by
  running commands in the sandbox;
* ``questions/``: three invented questions (not GAIA's) in GAIA's on-disk layout
  (``2023/validation/metadata.jsonl`` and the attachments beside it), read as any snapshot is.

The command that runs them is ``_cli/tryout.py``.
"""
