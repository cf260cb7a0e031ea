#!/usr/bin/env bash
# Tools the Docker tests need besides an engine: btrfs-progs (mkfs.btrfs), for the test-only
# engine whose data root is a loop-mounted btrfs, the one here that can enforce `-T disk=`
# (tests/spare_engine.py). Installed from the machine's own Debian release; nothing else changes.
set -euo pipefail

if command -v mkfs.btrfs >/dev/null 2>&1; then
  echo "test-tools: mkfs.btrfs present"
  exit 0
fi
echo "test-tools: installing btrfs-progs"
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends btrfs-progs >/dev/null
command -v mkfs.btrfs >/dev/null
