"""One run of evalscope's GAIA benchmark, offline, on a local GAIA-format snapshot.

Runs under evalscope's own interpreter (its venv, see ``harnesses.EvalscopeHarness``) and calls
the installed package; no evalscope code lives in this repository. Only the standard library and
evalscope are imported, so the file does not need this project's venv.

    EVALSCOPE_VENV/bin/python benchmarks/evalscope_driver.py --dataset DIR --model-url URL \
        --samples N --batch-size B [--fast] --image IMAGE --work-dir DIR

``--dataset`` holds ``README.md`` (whose YAML ``configs:`` name the subsets; evalscope loads
``datasets.load_dataset(dir, name="2023_all", split="validation")``) and ``2023/validation/``.
``--samples`` is evalscope's ``limit`` (per subset; one subset here, so exactly N samples).
``--batch-size`` is ``eval_batch_size``: samples, and so containers, at once.
``--fast`` replaces the container's command by one whose PID 1 exits on SIGTERM: evalscope stops
each sample's container with ``stop(timeout=10)``, and an image whose command ignores SIGTERM (as
``tail -f /dev/null`` does as PID 1) costs the full 10 s per sample before Docker kills it.
Replies are streamed (``generation_config.stream``), as in evalscope's published GAIA config.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

FAST_COMMAND = ["bash", "-c", 'trap "exit 0" TERM; sleep infinity & wait']
"""evalscope's fastest container command: PID 1 exits at once on the stop's SIGTERM."""


def main() -> None:
    """Parse the arguments and run one evalscope GAIA evaluation."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dataset", required=True)
    parser.add_argument("--model-url", required=True, help="OpenAI-compatible base URL, .../v1")
    parser.add_argument("--model", default="scripted")
    parser.add_argument("--samples", type=int, required=True)
    parser.add_argument("--batch-size", type=int, default=1)
    parser.add_argument("--fast", action="store_true")
    parser.add_argument("--image", required=True)
    parser.add_argument("--work-dir", required=True)
    args = parser.parse_args()

    # Offline: never ask the Hugging Face or ModelScope hubs anything.
    for var in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE"):
        os.environ.setdefault(var, "1")

    from evalscope import TaskConfig, run_task  # type: ignore[import-not-found]

    sandbox: dict[str, Any] = {"image": args.image}
    if args.fast:
        sandbox["command"] = FAST_COMMAND
    config = TaskConfig(
        model=args.model,
        api_url=args.model_url,
        api_key="scripted",
        eval_type="openai_api",
        datasets=["gaia"],
        dataset_hub="local",
        dataset_args={
            "gaia": {
                "dataset_id": str(Path(args.dataset).resolve()),
                "subset_list": ["2023_all"],
            }
        },
        limit=args.samples,
        eval_batch_size=args.batch_size,
        generation_config={"temperature": 0.0, "stream": True, "timeout": 120.0},
        sandbox={"default_config": sandbox},
        work_dir=args.work_dir,
        no_timestamp=True,
        # As in evalscope's published run; the harness checks every sample's review instead.
        ignore_errors=True,
    )
    run_task(task_cfg=config)


if __name__ == "__main__":
    main()
