"""The Docker side of GAIA's sandboxes: the ``gaia-docker`` provider and its guard on inspect's.

Each provider module is named after what it registers: ``gaia_docker`` (the ``gaia-docker``
SandboxEnvironment, one container per sample through the Engine API) and ``gaia_compose``
(``gaia-compose``: inspect's compose sandbox with GAIA's checks and start guard). Beneath them:
``service`` (compose service -> container arguments), ``client`` (the Docker SDK calls) and
``archive`` (files in and out of a container; with ``client``, the only places with docker-py
internals), ``cleanup`` (labels, run-scoped removal, the orphan sweep), ``engine`` (every engine and
image check and diagnosis, shared by the task, both providers and ``doctor``) and ``config`` (the
compose config a log holds). This module only names the providers and the images
``inspect-gaia image build`` makes, so the spec builders, the image builder and the engine checks
can name them without importing the SDK or each other.
"""

PROVIDER = "gaia-docker"
"""One container per sample, through the Docker Engine API (the default, ``-T sandbox=docker``)."""

COMPOSE_PROVIDER = "gaia-compose"
"""inspect's ``docker compose`` sandbox behind the start guard (``-T sandbox=compose``)."""

EGRESS_KEY = "x-inspect-gaia-egress"
"""Compose service extension: the answer-source rules the run's egress proxy refuses
(``{"rules": [[pattern, source], ...]}``, ``-T block_answer_sources=true``)."""
OFFLINE_TAG = "inspect-gaia/sandbox:bookworm"
"""The image built without a registry (``inspect-gaia image build --offline``)."""
OFFLINE_ATTACHMENTS_TAG = "inspect-gaia/sandbox:bookworm-attachments"
REGISTRY_TAG = "inspect-gaia/sandbox:py3.11"
"""The registry build without attachment readers: ``python:3.11`` plus the sandbox's command. Never
``python:3.11`` itself, which a build would shadow for everything else on the host."""
REGISTRY_ATTACHMENTS_TAG = "inspect-gaia/sandbox:py3.11-attachments"
OFFLINE_BROWSER_TAG = "inspect-gaia/sandbox:bookworm-browser"
"""The attachments image plus a headless browser and a page reader (``--offline --browser``)."""
REGISTRY_BROWSER_TAG = "inspect-gaia/sandbox:py3.11-browser"
"""The registry build of the same (``image build --browser``)."""
