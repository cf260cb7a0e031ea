"""The Docker side of GAIA's sandboxes: the ``gaia-docker`` provider and its guard on inspect's.

``provider`` (the SandboxEnvironment), ``service`` (compose service -> container arguments),
``client`` (the Docker SDK calls) and ``archive`` (files in and out of a container: with
``client``, the only places with docker-py internals), ``cleanup`` (labels,
run-scoped removal, the orphan sweep), ``engine`` (engine and image checks shared by the task, the
provider and ``doctor``), ``compose`` (inspect's compose sandbox with the start guard). This module
only names the providers, so the spec builders can name them without importing the SDK.
"""

PROVIDER = "gaia-docker"
"""One container per sample, through the Docker Engine API (the default, ``-T sandbox=docker``)."""

COMPOSE_PROVIDER = "gaia-compose"
"""inspect's ``docker compose`` sandbox behind the start guard (``-T sandbox=compose``)."""

EGRESS_KEY = "x-inspect-gaia-egress"
"""Compose service extension: the answer-source rules the run's egress proxy refuses
(``{"rules": [[pattern, source], ...]}``, ``-T block_answer_sources=true``)."""
