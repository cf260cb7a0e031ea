#!/usr/bin/env bash
# The sandbox images the Docker tests run, and the egress proxy's (-T block_answer_sources=true),
# built from Debian packages when missing (no registry needed: debootstrap + docker import, see
# `inspect-gaia image build --offline`), and the browser image (-T browser=true: the attachments
# image plus Chromium and Playwright MCP from the Debian archive and npm tarballs, ~70 s more), and
# the agents image (-T agent=: the attachments image plus the claude and codex binaries, Node.js
# and Gemini CLI from npm and mini-swe-agent's wheels from PyPI, ~430 MB fetched; 4 min under a load
# average of 7, 7 min 50 s under 10), rebuilt when its labels are not the versions the code pins
# (a CLI added or bumped; the layers of the CLIs that did not change stay cached).
# Idempotent. The proxy image holds Python and mitmproxy alone, tagged by mitmproxy's version: the
# addon, its supervisor and the URL rules are copied into each run's proxy container
# (shipped.PROXY_PROGRAMS), so changing them needs no rebuild; a change to the image itself must
# change its tag.
set -euo pipefail

missing=0
agents=inspect-gaia/sandbox:bookworm-agents
# the agents image's labels are the versions images/agents.py pins: 0 when they are
agents_current() {
  python -c "
from inspect_gaia.images.agents import LABELS
from inspect_gaia.sandboxes.docker.engine import local_image_labels
labels = local_image_labels('$agents') or {}
raise SystemExit(0 if all(labels.get(k) == v for k, v in LABELS.items()) else 1)"
}
stale=0
if docker image inspect "$agents" >/dev/null 2>&1 && ! agents_current; then
  echo "sandbox-images: $agents holds other CLI versions than the code pins: rebuilding it"
  stale=1
  missing=1
fi
proxy=$(python -c "from inspect_gaia.egress import PROXY_IMAGE; print(PROXY_IMAGE)")
for tag in inspect-gaia/sandbox:bookworm inspect-gaia/sandbox:bookworm-attachments \
  inspect-gaia/sandbox:bookworm-browser inspect-gaia/sandbox:bookworm-agents "$proxy"; do
  docker image inspect "$tag" >/dev/null 2>&1 || missing=1
done
if [ "$missing" -eq 0 ]; then
  echo "sandbox-images: all images present"
  exit 0
fi
if ! command -v debootstrap >/dev/null 2>&1; then
  echo "sandbox-images: installing debootstrap"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
fi
inspect-gaia image build --offline
inspect-gaia image build --offline --attachments
inspect-gaia image build --offline --egress-proxy
inspect-gaia image build --offline --browser
if [ "$stale" -eq 1 ]; then
  inspect-gaia image build --offline --agents --force
else
  inspect-gaia image build --offline --agents
fi
