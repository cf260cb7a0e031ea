"""Run inspect_evals' own GAIA task offline on gaia-mini: ``tests/fixtures/inspect-evals-gaia``.

``python -m support.inspect_evals_gaia [OUT_DIR]`` from the repository root (default: the fixture
directory) with inspect-evals 0.28.0 installed without its dependencies
(``pip install inspect-evals==0.28.0 --no-deps backoff jinja2 toml``), a Docker Engine and the local
image ``inspect-gaia/sandbox:bookworm`` (``inspect-gaia image build --offline``). Nothing leaves the
machine:

* ``inspect-evals-utils==0.2.0``, which PyPI does not serve, is stood in for by
  ``inspect_evals_shim`` (built from inspect-evals 0.26.0) on ``sys.path``;
* its dataset cache (``$INSPECT_EVALS_CACHE_DIR/gaia_dataset/GAIA``) is pre-filled with gaia-mini
  plus the README whose ``configs`` name the ``2023_*`` subsets, as the Hugging Face repository's
  does, and ``HF_HUB_OFFLINE=1`` makes its ``snapshot_download`` return that folder;
* its compose file is replaced by one naming the local image (with a command that keeps the
  container up, which inspect_evals' own image has built in);
* the model is the tests' scripted server, through inspect's ``openai-api`` provider.

The task itself, its default ``react`` agent (bash, python, web_search, submit), its prompt and its
scorer run unchanged. The log written is the fixture; ``ANSWERS`` are what the model submits.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

from support.inspect_evals_shim import build_shim
from support.scripted_model import Entry, ScriptedModel, serve

TESTS = Path(__file__).resolve().parent.parent / "tests"
FIXTURE = TESTS / "fixtures" / "inspect-evals-gaia"
GAIA_MINI = TESTS / "fixtures" / "gaia-mini" / "GAIA"
IMAGE = os.environ.get("INSPECT_GAIA_TEST_IMAGE", "inspect-gaia/sandbox:bookworm")
MODEL = "openai-api/scripted/gaia-bot"

README = """---
configs:
{configs}
---
gaia-mini, laid out as the Hugging Face repository gaia-benchmark/GAIA names its subsets.
"""
_CONFIG = """- config_name: 2023_{name}
  data_files:
  - split: test
    path: 2023/test/metadata{suffix}.parquet
  - split: validation
    path: 2023/validation/metadata{suffix}.parquet"""

COMPOSE = f"""services:
  default:
    image: {IMAGE}
    init: true
    command: ["tail", "-f", "/dev/null"]
"""

ANSWERS = [
    # L1 92: a unit added (a near miss, wrong for the official scorer)
    Entry("calendar days", [{"submit": "92 days"}]),
    Entry("tickets sold", [{"submit": "12,500"}]),  # L1 12500: right
    Entry("numeric user ID", [{"bash": "getent passwd 0 | cut -d: -f1"}, {"submit_output": True}]),
    # L2: the right names in another order (a near miss)
    Entry("crew of a ship", [{"submit": "Bartholomew, Ilse, Osric, Quentin"}]),
    Entry(
        "cylindrical water tank",
        [{"call": "python", "args": {"code": "print(round(3.14159265 * 1.5**2 * 2, 2))"}}]
        + [{"submit_output": True}],
    ),  # L2 14.14: right, computed with inspect_evals' python tool
    Entry("daily rainfall", [{"submit": "3, 8, 11"}]),  # L2: right
    Entry("PDF memo", [{"submit": "The Harbour Mill Renovation"}]),  # L3: an article (near miss)
    Entry("ROT13", [{"submit": "It's a dog-eat-dog world!"}]),  # L3: right
    Entry("divisible by 7", [{"submit": "1298"}]),  # L3 1299: wrong
]
"""inspect_evals' verdicts: L1 2/3, L2 2/3, L3 1/3, 5/9 overall."""


def prefill_cache(cache: Path) -> Path:
    """Copy gaia-mini where inspect_evals' GAIA loader looks, with the subsets' README."""
    root = cache / "gaia_dataset" / "GAIA"
    shutil.copytree(GAIA_MINI, root)
    configs = [_CONFIG.format(name="all", suffix="")] + [
        _CONFIG.format(name=f"level{level}", suffix=f".level{level}") for level in (1, 2, 3)
    ]
    (root / "README.md").write_text(README.format(configs="\n".join(configs)))
    return root


def run(out: Path) -> Path:
    """Run the task and copy its log into ``out``; returns the copy."""
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        build_shim(work / "shim")
        # Not for our own imports: inspect_evals imports ``inspect_evals_utils`` by that name, and
        # the shim built above is where it is found, for this process only.
        sys.path.insert(0, str(work / "shim"))
        os.environ["INSPECT_EVALS_CACHE_DIR"] = str(work / "cache")
        os.environ["HF_HUB_OFFLINE"] = "1"
        prefill_cache(work / "cache")
        compose = work / "compose.yaml"
        compose.write_text(COMPOSE)

        from inspect_ai import eval as inspect_eval
        from inspect_evals.gaia import gaia

        with serve(ScriptedModel(ANSWERS)) as url:
            os.environ.update(SCRIPTED_BASE_URL=url, SCRIPTED_API_KEY="scripted")
            (log,) = inspect_eval(
                gaia(sandbox=("docker", str(compose))),
                model=MODEL,
                log_dir=str(work / "logs"),
                display="plain",
            )
        if log.status != "success":
            raise SystemExit(f"inspect_evals' GAIA run ended {log.status}: {log.error}")
        out.mkdir(parents=True, exist_ok=True)
        target = out / "gaia-mini-4-C.eval"
        shutil.copy(log.location, target)
        return target


if __name__ == "__main__":
    print(run(Path(sys.argv[1]) if len(sys.argv) > 1 else FIXTURE))
