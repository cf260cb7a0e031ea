"""Known GAIA answer sources: the list, and detecting a sample that read one.

* ``sources``: the package's ``answer_sources.yaml`` plus a run's ``-T blocklist`` file, as URL
  rules (``egress/urlrules.py``: parsing, matching and finding URLs, standard library only,
  because the egress proxy runs the same file in its container).
* ``detect``: the evidence in a sample's transcript that the scorer records in
  ``Score.metadata["contamination"]``; ``matching`` normalises text and finds a question beside
  its answer; ``ownfile`` tells the sample's own work with its attachment (calls that only read
  it, names made from it) from a read; ``comments`` reads a shell or Python call without its
  comments (a comment carries nothing); ``parts`` reads a tool result's parts (its text, media the
  scan cannot read, pages of one text joined across their cut).
"""
