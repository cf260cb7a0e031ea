"""Where a run fails: accuracy by attachment type, annotator steps and annotator tools.

Each sample carries what its log recorded of the question: the attachment's file name (inspect_gaia
and evalscope record it; for inspect_evals it is read from the prompt) and GAIA's ``Annotator
Metadata`` (its number of steps and its tools, free text written by the annotators). A question
whose log has none of it is counted under ``unknown``.

* attachment: by the file's extension: ``none``, ``spreadsheet`` (xlsx, xls, csv, ods), ``image``
  (png, jpg, jpeg, gif, webp, bmp, tif, tiff, svg), ``pdf``, ``document`` (docx, doc, pptx, ppt,
  odt, rtf), ``audio/video`` (mp3, wav, m4a, flac, ogg, mp4, mov, avi, mkv, webm),
  ``text/code`` (txt, md, json, jsonld, xml, html, py and other code, pdb, tsv, log),
  ``archive`` (zip, tar, gz, tgz, bz2, xz, 7z, rar), else ``other``;
* steps: the annotators' ``Number of steps`` in buckets ``1-3``, ``4-6``, ``7-10``, ``11+``;
* tools: the annotators' ``Tools`` list, each line matched by keyword to ``web browsing``
  (browser, browsing, website, wikipedia, youtube, internet), ``search`` (search),
  ``coding`` (python, code, coding, programming, calculator, compiler, interpreter, terminal,
  bash), ``multimodality`` (image, video, audio, speech, vision, ocr, color/colour, recognition,
  transcri), ``file reading`` (pdf, excel, spreadsheet, file, word, powerpoint, document, csv,
  viewer, reader, editor, xml, json), or ``none`` when the list says none or is empty.
  A question needing several counts in each of them.

Accuracy per category is the mean over its questions of each question's mean over epochs, as in
the report's levels.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from typing import Any

from .nearmiss import RULES, near_misses
from .results import SampleResult

UNKNOWN = "unknown"
ATTACHMENT_TYPES: dict[str, tuple[str, ...]] = {
    "spreadsheet": ("xlsx", "xls", "xlsm", "csv", "ods"),
    "image": ("png", "jpg", "jpeg", "gif", "webp", "bmp", "tif", "tiff", "svg"),
    "pdf": ("pdf",),
    "document": ("docx", "doc", "pptx", "ppt", "odt", "rtf"),
    "audio/video": ("mp3", "wav", "m4a", "flac", "ogg", "aac", "mp4", "mov", "avi", "mkv", "webm"),
    "text/code": (
        *("txt", "md", "json", "jsonl", "jsonld", "xml", "html", "htm", "yaml", "yml", "py"),
        *("js", "java", "c", "cpp", "h", "sql", "sh", "pdb", "tsv", "log"),
    ),
    "archive": ("zip", "tar", "gz", "tgz", "bz2", "xz", "7z", "rar"),
}
ATTACHMENT_ORDER = ("none", *ATTACHMENT_TYPES, "other", UNKNOWN)
STEP_BUCKETS: tuple[tuple[str, int, int], ...] = (
    ("1-3", 1, 3),
    ("4-6", 4, 6),
    ("7-10", 7, 10),
    ("11+", 11, 10**9),
)
TOOL_KEYWORDS: dict[str, tuple[str, ...]] = {
    "web browsing": ("browser", "browsing", "website", "wikipedia", "youtube", "internet"),
    "search": ("search",),
    "coding": (
        *("python", "code", "coding", "programming", "calculator", "compiler"),
        *("interpreter", "terminal", "bash"),
    ),
    "multimodality": (
        *("image", "video", "audio", "speech", "vision", "ocr", "color", "colour"),
        *("recognition", "transcri"),
    ),
    "file reading": (
        *("pdf", "excel", "spreadsheet", "file", "word", "powerpoint", "document", "csv"),
        *("viewer", "reader", "editor", "xml", "json"),
    ),
}
TOOL_ORDER = (*TOOL_KEYWORDS, "none", UNKNOWN)
_NO_TOOLS = re.compile(
    r"^\s*(?:\d+[.)]\s*)?(?:none|no tools?(?: required| needed)?|n/?a)\s*\.?$", re.I
)


def attachment_type(metadata: Mapping[str, Any]) -> str:
    """The attachment category of a sample from its metadata's ``file_name``."""
    if "file_name" not in metadata:
        return UNKNOWN
    name = str(metadata.get("file_name") or "").strip()
    if not name:
        return "none"
    extension = name.rsplit(".", 1)[-1].lower() if "." in name else ""
    return next((kind for kind, exts in ATTACHMENT_TYPES.items() if extension in exts), "other")


def annotator(metadata: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """GAIA's ``Annotator Metadata`` as a log recorded it (inspect_gaia or the original key)."""
    found = metadata.get("annotator_metadata") or metadata.get("Annotator Metadata")
    return found if isinstance(found, Mapping) else None


def steps_bucket(metadata: Mapping[str, Any]) -> str:
    """The bucket of the annotators' number of steps, or ``unknown``."""
    notes = annotator(metadata)
    match = re.search(r"\d+", str((notes or {}).get("Number of steps") or ""))
    if not match:
        return UNKNOWN
    steps = int(match.group(0))
    return next((name for name, low, high in STEP_BUCKETS if low <= steps <= high), UNKNOWN)


def tool_categories(metadata: Mapping[str, Any]) -> list[str]:
    """The tool categories the annotators list (several, ``none``, or ``unknown``)."""
    notes = annotator(metadata)
    if notes is None or "Tools" not in notes:
        return [UNKNOWN]
    lines = [line for line in str(notes.get("Tools") or "").splitlines() if line.strip()]
    if not lines or all(_NO_TOOLS.match(line) for line in lines):
        return ["none"]
    text = " ".join(lines).lower()
    found = [name for name, words in TOOL_KEYWORDS.items() if any(w in text for w in words)]
    return found or [UNKNOWN]


def _rows(
    categories: Mapping[str, list[str]], samples: Sequence[SampleResult], order: Sequence[str]
) -> list[dict[str, Any]]:
    by_question: dict[str, list[SampleResult]] = {}
    for sample in samples:
        by_question.setdefault(sample.task_id, []).append(sample)
    rows = []
    for category in order:
        questions = [q for q, names in categories.items() if category in names]
        if not questions:
            continue
        means = [sum(s.correct for s in by_question[q]) / len(by_question[q]) for q in questions]
        rows.append(
            {
                "category": category,
                "questions": len(questions),
                "samples": sum(len(by_question[q]) for q in questions),
                "correct": sum(s.correct for q in questions for s in by_question[q]),
                "accuracy": sum(means) / len(means),
            }
        )
    return rows


def breakdown(samples: Sequence[SampleResult]) -> dict[str, list[dict[str, Any]]]:
    """Accuracy by attachment type, annotator steps and annotator tools (graded samples)."""
    first: dict[str, SampleResult] = {}
    for sample in samples:
        first.setdefault(sample.task_id, sample)
    return {
        "attachment": _rows(
            {q: [attachment_type(s.metadata)] for q, s in first.items()}, samples, ATTACHMENT_ORDER
        ),
        "steps": _rows(
            {q: [steps_bucket(s.metadata)] for q, s in first.items()},
            samples,
            [name for name, _, _ in STEP_BUCKETS] + [UNKNOWN],
        ),
        "tools": _rows(
            {q: tool_categories(s.metadata) for q, s in first.items()}, samples, TOOL_ORDER
        ),
    }


def where_it_fails(samples: Sequence[SampleResult]) -> dict[str, Any]:
    """The breakdowns and the near misses of a group's graded samples, as one JSON-ready part."""
    misses = near_misses(
        [(s.task_id, s.level, s.epoch, s.answer, s.target) for s in samples if not s.correct]
    )
    levels = sorted({s.level for s in samples})
    counts = [
        {
            "level": str(level),
            "near_misses": sum(m.level == level for m in misses),
            "questions": len({m.task_id for m in misses if m.level == level}),
        }
        for level in levels
    ]
    counts.append(
        {"level": "all", "near_misses": len(misses), "questions": len({m.task_id for m in misses})}
    )
    return {
        "breakdown": breakdown(samples),
        "near_misses": {
            "rules": list(RULES),
            "levels": counts,
            "items": [
                asdict(m) for m in sorted(misses, key=lambda m: (m.level, m.task_id, m.epoch))
            ],
        },
    }
