#!/usr/bin/env bash
# Make sure a Docker Engine (>= 24.0.6) with Compose v2 (>= 2.21) answers.
# On a machine with no engine (this project's CI, a fresh Debian bookworm), install Debian trixie's
# docker.io, docker-cli and docker-compose and nothing else from trixie: no recommends, and
# containerd, runc and tini named from bookworm (trixie's runc would pull trixie's libc6 and dpkg,
# its recommends trixie's python3 3.13). Then start dockerd.
# The system's python3, libc6 and dpkg are read before and after; any change fails the script.
# Why each package comes from where it does: docs/development.md, "A Docker Engine without a
# registry".
set -euo pipefail

if docker info >/dev/null 2>&1; then
  echo "docker-engine: an engine already answers"
  exit 0
fi

system_fingerprint() {
  # /usr/bin/python3 (not the first python3 on PATH: a pyenv shim would hide a switch).
  if [ -x /usr/bin/python3 ]; then /usr/bin/python3 --version 2>&1; else echo "no /usr/bin/python3"; fi
  dpkg-query -W -f='${Package} ${Version}\n' libc6 dpkg python3 2>/dev/null || true
}

if ! command -v dockerd >/dev/null 2>&1 || ! docker compose version >/dev/null 2>&1; then
  before=$(system_fingerprint)
  echo "docker-engine: installing docker.io, docker-cli and docker-compose from Debian trixie (nothing else)"
  cat > /etc/apt/sources.list.d/trixie.sources <<'SRC'
Types: deb
URIs: http://deb.debian.org/debian
Suites: trixie
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
  # Trixie below bookworm: nothing drifts to trixie unless named with /trixie below.
  cat > /etc/apt/preferences.d/trixie-low <<'PIN'
Package: *
Pin: release n=trixie
Pin-Priority: 100
PIN
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    docker.io/trixie docker-cli/trixie docker-compose/trixie \
    containerd/bookworm runc/bookworm tini/bookworm iptables >/dev/null
  after=$(system_fingerprint)
  if [ "$before" != "$after" ]; then
    echo "docker-engine: installing Docker changed the system's Python, libc or dpkg:" >&2
    diff <(echo "$before") <(echo "$after") >&2 || true
    exit 1
  fi
  echo "docker-engine: system unchanged: $(echo "$after" | tr '\n' ';')"
fi

log=${DOCKERD_LOG:-/tmp/dockerd.log}
echo "docker-engine: starting dockerd (log: $log)"
nohup dockerd >"$log" 2>&1 &
for _ in $(seq 1 60); do
  if docker info >/dev/null 2>&1; then
    docker version --format 'docker-engine: engine {{.Server.Version}} up'
    docker compose version
    exit 0
  fi
  sleep 1
done
echo "docker-engine: dockerd did not answer within 60 s; last lines of $log:" >&2
tail -n 30 "$log" >&2
exit 1
