"""The ``inspect-gaia`` command line: one module per command, loaded on first use.

* ``main``: the group, and ``COMMANDS``, where each command's module is named;
* the commands: ``tryout`` (a first run, no key: ``tryout/``), ``doctor`` (its checks in
  ``_checks``), ``download``, ``image``, ``report``, ``compare``, ``submission`` and the group
  ``web`` (its commands ``web_export``, ``web_merge``, ``web_verify``);
* the renderers: ``_output`` (tables fitted to the terminal, Markdown, CSV, JSON), ``_sanitise``
  (a log's text shown, never obeyed), ``_short`` (the overview's flags, a few words each),
  ``_failures`` (``report --breakdown``), ``_judge`` (``--judge`` and ``--question-set`` beside
  the official score), ``_web`` (what the samples requested on the web), ``_probe`` (a probe
  run's table) and ``_plot`` (charts).
"""
