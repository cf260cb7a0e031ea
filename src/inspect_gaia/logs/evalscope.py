"""An EvalScope GAIA output folder read as a run: its ``reviews/<model>/gaia_*.jsonl`` files.

``compare`` puts such a run beside an inspect_gaia one (``sides``); each review line becomes a
``SampleResult`` with EvalScope's own verdict, the question it asked and its extracted answer.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from ..errors import GaiaError, few
from ..questions.dataset import question_text
from .budget import RECORD, counter, keep
from .files import UnsafeFile, read_text
from .results import RunResults, SampleResult

_LEVEL_FILE = re.compile(r"gaia_\d+_level(\d)\.jsonl$")


def evalscope_review_files(directory: str | Path) -> list[Path]:
    """The GAIA review files of an EvalScope output folder, or of one model's folder in it.

    ``reviews/<model>/gaia_*.jsonl`` under the folder, or ``gaia_*.jsonl`` in ``reviews/<model>``;
    ``[]`` when it is neither.
    """
    root = Path(directory)
    files = sorted(root.glob("reviews/*/gaia_*.jsonl"))
    if not files and root.parent.name == "reviews":
        files = sorted(root.glob("gaia_*.jsonl"))
    return files


def read_evalscope_run(directory: str | Path) -> RunResults:
    """Read an EvalScope GAIA output folder: its ``reviews/<model>/gaia_*.jsonl`` files.

    ``directory`` may also be one model's folder, ``reviews/<model>``. Reviews of several models
    are several runs, and a question reviewed twice is no run at all: both are refused rather
    than merged.

    Raises:
        GaiaError: No GAIA review files are there, several models' are, a file cannot be read
            or holds a malformed line, or a task id is there twice.
    """
    root = Path(directory)
    files = evalscope_review_files(root)
    if not files:
        raise GaiaError(
            f"{root} is not an evalscope GAIA output directory: no reviews/<model>/gaia_*.jsonl"
        )
    models = sorted({file.parent.name for file in files})
    if len(models) > 1:
        raise GaiaError(
            f"{root} holds the reviews of {len(models)} models ({few(models)}), which "
            "are separate runs",
            fix=f"name one model's folder, e.g. {root / 'reviews' / models[0]}",
        )
    samples: list[SampleResult] = []
    where: dict[str, str] = {}
    for file in files:
        match = _LEVEL_FILE.search(file.name)
        try:
            text = read_text(file, count=counter(file))
        except (UnsafeFile, OSError) as ex:
            reason = ex.reason if isinstance(ex, UnsafeFile) else ex.strerror or str(ex)
            raise GaiaError(f"cannot read {file}: {reason}", fix="is the run complete?") from ex
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            sample = _evalscope_review(line, match.group(1) if match else "0", file, number)
            if sample.task_id in where:
                first = where[sample.task_id]
                raise GaiaError(
                    f"task id {sample.task_id} is reviewed twice in {root} ({first} and "
                    f"{file.name}, line {number})",
                    fix="keep one review per question: are two runs' reviews in one folder?",
                )
            where[sample.task_id] = f"{file.name}, line {number}"
            keep(RECORD + len(line), file)
            samples.append(sample)
    return RunResults(source=str(root), model=models[0], split="validation", samples=tuple(samples))


def _evalscope_review(line: str, file_level: str, file: Path, number: int) -> SampleResult:
    """One evalscope review line as a SampleResult; a malformed line is a one-line error."""
    try:
        review = json.loads(line)
        sample_score = review["sample_score"]
        score = sample_score["score"]
        metadata = sample_score.get("sample_metadata") or {}
        task_id = metadata["task_id"]
        target = (score.get("metadata") or {}).get("target")
        if target is None:
            target = review["target"][0] if isinstance(review["target"], list) else review["target"]
        value = score["value"]
        accuracy = float(value.get("acc", 0.0) if isinstance(value, dict) else value)
        level = int(metadata.get("level") or file_level)
        asked = next(
            (m.get("content") for m in review.get("messages") or [] if m.get("role") == "user"),
            None,
        )
    except json.JSONDecodeError as ex:
        raise GaiaError(
            f"{file}, line {number}: not JSON ({ex.msg})", fix="is the run complete?"
        ) from ex
    except RecursionError as ex:
        raise GaiaError(
            f"{file}, line {number}: JSON nested too deeply to read",
            fix="is this an evalscope GAIA output directory?",
        ) from ex
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as ex:
        raise GaiaError(
            f"{file}, line {number}: not an evalscope GAIA review (no usable {ex!s})",
            fix="is this an evalscope GAIA output directory?",
        ) from ex
    return SampleResult(
        task_id=str(task_id),
        level=level,
        target=str(target),
        answer=score.get("extracted_prediction"),
        correct=accuracy == 1.0,
        metadata=metadata,
        question=question_text(asked) if isinstance(asked, str) else "",
    )
