"""Known GAIA answer sources: the list, its URL rules, and detecting a sample that read one.

* ``sources``: the package's ``answer_sources.yaml`` plus a run's ``-T blocklist`` file.
* ``urlrules``: parsing, normalising and matching URL rules, and finding URLs in text; standard
  library only, because the egress proxy (``_egress/``, started by ``_docker/egress.py``) runs
  the same file inside its container.
* ``detect``: the evidence in a sample's transcript that the scorer records in
  ``Score.metadata["contamination"]``; ``matching`` normalises text and finds a question beside
  its answer; ``ownfile`` tells the sample's own work with its attachment (calls that only read
  it, names made from it) from a read.
"""
