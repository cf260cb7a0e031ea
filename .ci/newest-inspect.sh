#!/usr/bin/env bash
# The compat layer against the newest inspect_ai on PyPI, beside the pinned floor the main run
# uses: a breaking inspect release shows up the day it ships. Its own venv; the fast loop plus one
# Docker end-to-end test.
set -euo pipefail
cd "$(dirname "$0")/.."
current=$(python -c 'import importlib.metadata as m; print(m.version("inspect_ai"))')
newest=$(python -m pip index versions inspect_ai 2>/dev/null | sed -n 's/^inspect_ai (\(.*\))$/\1/p' | head -1)
if [ -n "$newest" ] && [ "$newest" = "$current" ]; then
  echo "newest-inspect: inspect_ai $current, the newest on PyPI, is the one the suite just ran with"
  exit 0
fi
python3 -m venv .venv-newest
# shellcheck disable=SC1091
source .venv-newest/bin/activate
python -m pip install -q --upgrade pip
python -m pip install -q -e ".[test]"
python -m pip install -q --upgrade inspect_ai
echo "newest-inspect: inspect_ai $(python -c 'import importlib.metadata as m; print(m.version("inspect_ai"))')"
python -m pytest -q -m "not docker" -p no:cacheprovider
python -m pytest -q -p no:cacheprovider "tests/test_e2e.py::test_cli_run_scores_per_level_and_cleans_up[docker]"
