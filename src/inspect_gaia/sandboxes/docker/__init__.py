"""The Docker side of GAIA's sandboxes: the ``gaia-docker`` provider and its guard on inspect's.

The map (a test holds it to the folder: every module is named here):

* providers, each named after what it registers: ``gaia_docker`` (the ``gaia-docker``
  SandboxEnvironment, one container per sample through the Engine API: its lifecycle and
  inspect's API) and ``gaia_compose`` (``gaia-compose``: inspect's compose sandbox with GAIA's
  checks and start guard);
* what a container is: ``service`` (compose service -> container arguments), ``config`` (the compose
  config a log holds, and how the readers read it back without the providers), ``cleanup`` (labels,
  the run's state and network, run-scoped removal, the orphan sweep);
* talking to the engine: ``client`` (the docker SDK's calls, on worker threads), ``archive``
  (files in and out; with ``client``, the modules that use docker-py internals), ``exec_stream``
  (the Engine's exec protocol, spoken once and asynchronously: the engine's address, an exec's
  start, its framing),
  ``engine`` (every engine and image check and diagnosis, shared by the task, both providers and
  ``doctor``);
* ``egress``, ``egress_reach``, ``egress_watch``, ``egress_record`` and ``egress_archive``: the
  Docker side of the run's egress proxy (``-T block_answer_sources``, ``web_record``,
  ``web_replay``; its programs are the ``egress`` wing's), a feature, not an optimisation: its
  container's lifecycle, what it may not reach (and, in tests, may), the watch that ends a sample
  whose command ran while the proxy was down, each sample's part of its record of requests, and
  the run's archive of the bodies (``-T web_record=bodies``).

Two optimisations, each with what it falls back to:

* ``channel`` with ``exec_server``: one runner per sandbox runs every command (~8 ms instead of
  ~60 ms of CPU each); falls back to an exec per command (``exec_stream.run``) when the image has
  no ``python3``, for another user, or when the runner breaks;
* ``spares``: a container started ahead for the next sample, finished ones removed in the
  background, starts two per engine CPU in turn; falls back to each sample starting and removing
  its own container at once (``--max-sandboxes``, ``block_answer_sources``).

``INSPECT_GAIA_PLAIN_DOCKER=1`` turns both off for a run (read by ``gaia-docker``'s task_init):
an exec per command, no spares, every start at once. What a sample sees is the same either way
(the conformance suite runs both), so a failure that goes away when plain is the optimisations',
and one that stays is the provider's. This module only names the switch and the run's tag (the
providers' names are the record's: ``defaults``), so the provider's modules share them without
the SDK.
"""

import os

TAG_LABEL = "inspect_gaia.tag"
"""On every resource of a run started with ``INSPECT_GAIA_TAG`` set (value: that variable): its
sandboxes, networks, proxy and engine probes, of either Docker provider."""
TAG_VARIABLE = "INSPECT_GAIA_TAG"

PLAIN_ENV = "INSPECT_GAIA_PLAIN_DOCKER"
"""Set to ``1``: plain gaia-docker, without the command channel, spares or starts in turn."""


def plain_requested() -> bool:
    """Whether ``INSPECT_GAIA_PLAIN_DOCKER`` asks for plain gaia-docker (any value but 0/empty)."""
    return os.environ.get(PLAIN_ENV, "").strip().lower() not in ("", "0", "false", "no")
