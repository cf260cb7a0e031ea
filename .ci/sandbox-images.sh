#!/usr/bin/env bash
# The sandbox images the Docker tests run, built from Debian packages when missing (no registry
# needed: debootstrap + docker import, see `inspect-gaia image build --offline`). Idempotent.
set -euo pipefail

missing=0
for tag in inspect-gaia/sandbox:bookworm inspect-gaia/sandbox:bookworm-attachments; do
  docker image inspect "$tag" >/dev/null 2>&1 || missing=1
done
if [ "$missing" -eq 0 ]; then
  echo "sandbox-images: both images present"
  exit 0
fi
if ! command -v debootstrap >/dev/null 2>&1; then
  echo "sandbox-images: installing debootstrap"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
fi
inspect-gaia image build --offline
inspect-gaia image build --offline --attachments
