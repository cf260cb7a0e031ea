"""The GAIA dataset: where its files are, how a record becomes a Sample.

This module is the one place that knows GAIA's own facts: its on-disk layout, its release year,
splits and levels (``parse_level`` is the one reading of a level, from a metadata row, a ``-T``
value or ``gaia_dataset``'s argument). A snapshot (of the Hugging Face repo
``gaia-benchmark/GAIA``, of its ModelScope mirror, or a local copy) holds, per split,
``2023/<split>/metadata.parquet`` (since the repo's parquet conversion) or ``metadata.jsonl`` (older
snapshots), with each attachment flat beside it and named by the record's ``file_name``. Those files
are read by ``snapshot_files``, which trusts none of them; a row means what ``check_record`` says.

The prompt is the one inspect_evals' GAIA uses and evalscope's GAIA copies verbatim, so numbers from
the three harnesses compare.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal, get_args

from inspect_ai.dataset import Dataset, MemoryDataset, Sample
from inspect_ai.model import ChatMessage, ChatMessageUser, ContentText
from pydantic import BaseModel, ConfigDict

from ..errors import GaiaDatasetError, GaiaParameterError, one_of
from .hub import DEFAULT_HUB, HUBS, Hub, fetch_snapshot, resolved_revision
from .media import attachment_content
from .snapshot_files import attachment_path, claim_attachment, read_records

YEAR = "2023"
"""The GAIA release: a snapshot holds its splits under ``2023/``."""
Split = Literal["validation", "test"]
SPLITS: tuple[Split, ...] = get_args(Split)
DEFAULT_SPLIT: Split = "validation"
"""The split a run asks by default: the one with public answers."""
LEVELS: tuple[int, ...] = (1, 2, 3)
"""GAIA's difficulty levels."""

METADATA_FILES: tuple[str, ...] = ("metadata.parquet", "metadata.jsonl")
SHARED_FILES_DIR = "/shared_files"

DEFAULT_INPUT_PROMPT = """Please answer the question below. You should:

- Return only your answer, which should be a number, or a short phrase with as few words as possible, or a comma separated list of numbers and/or strings.
- If the answer is a number, return only the number without any units unless specified otherwise.
- If the answer is a string, don't include articles, and don't use abbreviations (e.g. for states).
- If the answer is a comma separated list, apply the above rules to each element in the list.

{file}

Here is the question:

{question}"""  # noqa: E501 -- verbatim from inspect_evals/evalscope, so results compare

QUESTION_MARKER = "Here is the question:"
"""The line before the question in ``DEFAULT_INPUT_PROMPT`` (and inspect_evals' and EvalScope's)."""


def question_text(prompt: str) -> str:
    """The question in a sample's input: what follows the last ``QUESTION_MARKER``, else all."""
    _, marker, after = prompt.rpartition(QUESTION_MARKER)
    return after.strip() if marker else prompt.strip()


FILE_HINT = (
    "The following file is referenced in the question below and you will likely need to use it "
    "in order to find the correct answer: {path}"
)


class GaiaMetadata(BaseModel):
    """What each sample carries besides its question and target (read with ``metadata_as``)."""

    model_config = ConfigDict(frozen=True)

    level: int
    """GAIA difficulty level, 1 to 3."""

    file_name: str
    """Attachment file name, ``""`` when the question has none."""

    annotator_metadata: dict[str, Any] | None = None
    """GAIA's ``Annotator Metadata`` (steps, tools, time); host-side only, never in a sandbox."""

    attachment_sent: str | None = None
    """With ``multimodal``: how the attachment was sent to the model, or why it was not."""


def split_dir(root: Path, split: str) -> Path:
    """The directory of one split inside a snapshot: metadata and attachments."""
    return root / YEAR / split


def metadata_file(root: Path, split: str) -> Path:
    """The split's metadata file (parquet preferred over jsonl).

    Raises:
        GaiaDatasetError: ``root`` is not a GAIA snapshot holding ``split``.
    """
    directory = split_dir(root, split)
    for name in METADATA_FILES:
        candidate = directory / name
        if candidate.is_file():
            return candidate
    if not root.is_dir():
        raise GaiaDatasetError(f"dataset_path {str(root)!r} is not a directory")
    near = _snapshot_near(root, split)
    raise GaiaDatasetError(
        f"{str(root)!r} is not a GAIA snapshot: no {YEAR}/{split}/metadata.parquet (or "
        "metadata.jsonl) in it",
        fix=f"pass the folder that holds {YEAR}/" + (f": {near}" if near else ""),
    )


def _snapshot_near(root: Path, split: str) -> Path | None:
    """The snapshot a path one level off names: ``2023/`` itself, its split, or a folder in it."""

    def holds(candidate: Path) -> bool:
        return any((split_dir(candidate, split) / name).is_file() for name in METADATA_FILES)

    above = [root.parent] if root.name == YEAR else []
    above += [root.parent.parent] if root.parent.name == YEAR else []
    try:  # a folder of the first hundred in it, when one alone holds a snapshot
        inside = [c for _, c in zip(range(100), root.iterdir(), strict=False) if holds(c)]
    except OSError:
        inside = []
    found = [c for c in above if holds(c)] or inside
    return found[0] if len(found) == 1 else None


REQUIRED_COLUMNS: tuple[str, ...] = ("task_id", "Question", "Level", "Final answer")


class GaiaRecord(BaseModel):
    """One metadata row, checked: what a Sample is made of."""

    model_config = ConfigDict(frozen=True)

    task_id: str
    question: str
    level: int
    answer: str
    file_name: str
    annotator_metadata: dict[str, Any] | None = None


def check_record(raw: dict[str, Any], source: Path, row: int) -> GaiaRecord:
    """A metadata row as a ``GaiaRecord``; a malformed one is a one-line error naming it.

    Raises:
        GaiaDatasetError: A column is missing, or a value is not what GAIA has (e.g. a level
            other than 1, 2 or 3); the message names the file, the row and the problem.
    """
    task_id = raw.get("task_id")
    where = f"{source}, row {row}" + (f" (task {task_id})" if task_id else "")

    def fail(problem: str) -> GaiaDatasetError:
        return GaiaDatasetError(
            f"GAIA metadata {where}: {problem}", fix="fix or re-download the snapshot"
        )

    missing = [c for c in REQUIRED_COLUMNS if c not in raw]
    if missing:
        raise fail(f"no {', '.join(repr(c) for c in missing)} column")
    if not isinstance(task_id, str) or not task_id.strip():
        raise fail(f"task_id must be a non-empty string, got {task_id!r}")
    level = parse_level(raw["Level"])
    if level is None:
        raise fail(f"Level must be 1, 2 or 3, got {raw['Level']!r}")
    for column in ("Question", "Final answer"):
        if not isinstance(raw[column], (str, int, float)) or isinstance(raw[column], bool):
            raise fail(f"{column!r} must be text, got {raw[column]!r}")
    file_name = raw.get("file_name") or ""
    if not isinstance(file_name, str):
        raise fail(f"file_name must be text, got {file_name!r}")
    annotator = raw.get("Annotator Metadata")
    return GaiaRecord(
        task_id=task_id.strip(),
        question=str(raw["Question"]),
        level=level,
        answer=str(raw["Final answer"]),
        file_name=file_name,
        annotator_metadata=annotator if isinstance(annotator, dict) else None,
    )


def parse_level(value: object) -> int | None:
    """1, "1", 1.0 or "1.0" -> 1; anything that is not exactly 1, 2 or 3 -> None.

    The one reading of a level, whether a metadata row's, a ``-T level`` item or ``gaia_dataset``'s.
    """
    if isinstance(value, bool) or value is None:
        return None
    try:
        number = float(str(value).strip())
    except ValueError:
        return None
    return int(number) if number.is_integer() and int(number) in LEVELS else None


def record_to_sample(
    record: GaiaRecord,
    attachment: Path | None,
    input_prompt: str = DEFAULT_INPUT_PROMPT,
    multimodal: bool = False,
) -> Sample:
    """One checked GAIA record as a Sample; ``attachment`` is its host file, if it has one.

    With ``multimodal``, an attachment the model can take natively (``media``) is also in the
    first user message, beside the unchanged prompt text (read now, as a data URI); the sample's
    metadata says how it was sent, or why not.

    The sandbox copy is inspect's, from the host path, when the sample starts; a file that is gone
    by then ends the sample as a set-up failure (``sandboxes/faults.unread_sample_file``).
    """
    sandbox_path = f"{SHARED_FILES_DIR}/{record.file_name}"
    prompt = input_prompt.format(
        file=FILE_HINT.format(path=sandbox_path) if record.file_name else "",
        question=record.question,
    )
    sample_input: str | list[ChatMessage] = prompt
    sent = None
    if multimodal and attachment is not None:
        content, sent = attachment_content(str(attachment), record.file_name)
        if content is not None:
            sample_input = [ChatMessageUser(content=[ContentText(text=prompt), content])]
    metadata = GaiaMetadata(
        level=record.level,
        file_name=record.file_name,
        annotator_metadata=record.annotator_metadata,
        attachment_sent=sent,
    )
    return Sample(
        id=record.task_id,
        input=sample_input,
        target=record.answer,
        # The default run's metadata stays as it was: `attachment_sent` only when it says something.
        metadata=metadata.model_dump(exclude={"attachment_sent"} if sent is None else set()),
        # Only this sample's own attachment enters its sandbox.
        files={sandbox_path: str(attachment)} if attachment is not None else None,
    )


def load_samples(
    root: Path,
    split: str,
    input_prompt: str = DEFAULT_INPUT_PROMPT,
    multimodal: bool = False,
    selected: Callable[[GaiaRecord], bool] | None = None,
) -> list[Sample]:
    """The questions of a split (those ``selected``, default all) as Samples.

    Every record and attachment of the split is checked, selected or not; only the selected
    become Samples (with ``multimodal``, that reads their attachments).

    Raises:
        GaiaDatasetError: The metadata or an attachment is malformed, missing or unsafe.
    """
    source = metadata_file(root, split)
    records = [check_record(raw, source, row) for row, raw in enumerate(read_records(source), 1)]
    task_ids = {r.task_id for r in records}
    if len(task_ids) != len(records):
        counts = Counter(r.task_id for r in records)
        twice = sorted(task_id for task_id, count in counts.items() if count > 1)
        raise GaiaDatasetError(
            f"GAIA metadata {source}: task id(s) {', '.join(twice)} appear more than once",
            fix="fix or re-download the snapshot",
        )
    claimed: dict[str, str] = {}
    samples = []
    for record in records:
        attachment = None
        if record.file_name:
            claim_attachment(claimed, record.task_id, record.file_name)
            attachment = attachment_path(
                record.task_id, record.file_name, source.parent, root, task_ids
            )
        if selected is None or selected(record):
            try:
                samples.append(record_to_sample(record, attachment, input_prompt, multimodal))
            except OSError as ex:  # multimodal reads the file; it may not be readable
                raise GaiaDatasetError(
                    f"attachment {record.file_name!r} of task {record.task_id} cannot be read "
                    f"({ex.strerror or ex})",
                    fix="fix the snapshot's permissions or re-download it",
                ) from ex
    return samples


def split_levels(root: Path, split: str) -> dict[str, int]:
    """Every task id of a split and its level (for checking ids given by the user)."""
    source = metadata_file(root, split)
    return {
        record.task_id: record.level
        for record in (
            check_record(raw, source, row) for row, raw in enumerate(read_records(source), 1)
        )
    }


def resolve_snapshot(
    split: Split, hub: Hub, revision: str | None, dataset_path: str | None
) -> tuple[Path, str]:
    """Find (or fetch) the snapshot to read; returns its root and the revision it stands for."""
    resolved = resolved_revision(hub, revision, dataset_path)
    if dataset_path is not None:
        return Path(dataset_path).expanduser().resolve(), resolved
    return fetch_snapshot(hub, resolved, [f"{YEAR}/{split}/*"], key=split), resolved


def gaia_dataset(
    split: Split = DEFAULT_SPLIT,
    levels: Sequence[int] = LEVELS,
    ids: Sequence[str] | None = None,
    hub: Hub = DEFAULT_HUB,
    revision: str | None = None,
    dataset_path: str | None = None,
    input_prompt: str = DEFAULT_INPUT_PROMPT,
    multimodal: bool = False,
) -> Dataset:
    """Load GAIA questions as inspect Samples, each with its own attachment.

    Args:
        split: ``validation`` (answers public) or ``test`` (answers are ``"?"``).
        levels: Levels to keep (default all three).
        ids: GAIA task ids to keep; all when ``None``.
        hub: ``huggingface`` (gated, needs a token) or ``modelscope``.
        revision: Hub revision; the pinned default of the hub when ``None``.
        dataset_path: A local snapshot; when given, no hub is contacted.
        input_prompt: Template with ``{file}`` and ``{question}`` fields.
        multimodal: Also send images, audio, video and PDF attachments to the model natively.

    Raises:
        GaiaParameterError: A parameter has an invalid value.
        GaiaDatasetError: The snapshot is missing, damaged, incomplete or cannot be fetched.
    """
    split = one_of("split", split, SPLITS)
    hub = one_of("hub", hub, HUBS)
    if not levels or any(parse_level(level) != level for level in levels):
        raise GaiaParameterError("levels must be 1, 2 or 3, or a list of them", got=levels)
    root, _ = resolve_snapshot(split, hub, revision, dataset_path)
    wanted = None if ids is None else set(ids)
    samples = load_samples(
        root,
        split,
        input_prompt,
        multimodal,
        lambda r: r.level in levels and (wanted is None or r.task_id in wanted),
    )
    if ids is not None:
        present = {str(s.id) for s in samples}
        missing = [i for i in ids if i not in present]
        if missing:
            raise GaiaParameterError(
                f"ids not in the {split} split at level {','.join(map(str, levels))}: "
                f"{', '.join(missing)}"
            )
    return MemoryDataset(samples, name=f"gaia-{split}", location=str(root))
