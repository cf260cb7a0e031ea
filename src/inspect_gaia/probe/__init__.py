"""The probe: a run that tries every route to GAIA's answers in its sandboxes; 0 when none is open.

* ``task``: ``inspect_gaia/gaia_probe``, ``gaia``'s parameters and ``web_targets``, on inspect's
  mock model (never asked);
* ``solver``: runs the program below in each sample's sandbox and keeps what its routes returned;
* ``inside`` (the routes, ``ROUTES``: one entry per route), ``inside_web`` (its web routes) and
  ``inside_net`` (its neighbours'): the program, run in the sandbox (``shipped.PROBE_PROGRAMS``;
  standard library only);
* ``settings``: the host's checks of the sandbox's own settings (compose service, Kubernetes
  values), ``CHECKS``: one entry per check;
* ``targets``: the URLs the web routes ask for (the answer sources, or ``-T web_targets``);
* ``scorer``: on the host, the routes' findings searched for the answers; 1 when a route breached;
* ``outcomes``: a leaf, the outcomes' vocabulary and a route as a log holds it (``logs/`` reads
  it with ``routes_of``).

docs/probe.md says what it tries, what it cannot, and how to add a route.
"""
