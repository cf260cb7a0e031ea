#!/usr/bin/env bash
# The sandbox images the Docker tests run, and the egress proxy's (-T block_answer_sources=true),
# built from Debian packages when missing (no registry needed: debootstrap + docker import, see
# `inspect-gaia image build --offline`), and the browser image (-T browser=true: the attachments
# image plus Chromium and Playwright MCP from the Debian archive and npm tarballs, ~70 s more), and
# the agents image (-T agent=: the attachments image plus the claude and codex binaries from npm
# and mini-swe-agent's wheels from PyPI, ~360 MB fetched; 4 min under a load average of 7, 7 min 50 s
# under 10).
# Idempotent. The proxy image holds Python and mitmproxy alone, tagged by mitmproxy's version: the
# addon, its supervisor and the URL rules are copied into each run's proxy container
# (_egress.ADDON_FILES), so changing them needs no rebuild; a change to the image itself must
# change its tag.
set -euo pipefail

missing=0
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
inspect-gaia image build --offline --agents
