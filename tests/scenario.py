"""What the scripted model answers on gaia-tiny, and the scores that must follow."""

from __future__ import annotations

from pathlib import Path

from support.scripted_model import Entry

GAIA_TINY = Path(__file__).parent / "fixtures" / "gaia-tiny"
LAGOON = "7e472f07-8c34-532e-9ea2-293dc66819b2"
"""gaia-tiny's level-1 question without an attachment (the invented lagoon)."""
VISITS = "9410e454-b071-52ff-ac24-dce9845bebd0"
"""gaia-tiny's csv question."""
CREW = "a3cdf335-799b-57ca-a178-6fe70216b1cd"
"""gaia-tiny's json question."""
VALIDATION_DIR = Path("2023") / "validation"
"""Where a snapshot (gaia-tiny, or a copy of it) holds the validation split."""

_VALIDATION_FILES = {
    "csv": "9410e454-b071-52ff-ac24-dce9845bebd0.csv",
    "json": "a3cdf335-799b-57ca-a178-6fe70216b1cd.json",
    "xlsx": "9f5ddf59-f099-5276-b702-dfa6abde1964.xlsx",
    "txt": "08efad48-7b05-5662-b32c-3635fd01cd40.txt",
}
_F = {ext: f"/shared_files/{name}" for ext, name in _VALIDATION_FILES.items()}

VALIDATION = [
    # L1, correct: the sum printed with a thousands separator, read from the attachment.
    Entry(
        "visitors per gallery",
        [
            {
                "bash": "python3 -c \"import csv; print(format(sum(int(r['visitors']) for r in "
                f"csv.DictReader(open('{_F['csv']}'))), ','))\""
            },
            {"submit_output": True},
        ],
    ),
    # L1, correct: case and whitespace differ.
    Entry("invented lagoon", [{"submit": "quillfeather   LAGOON"}]),
    # L2, correct: a list separated by ';' computed from the attachment.
    Entry(
        "crew of a skiff",
        [
            {
                "bash": "python3 -c \"import json; c=json.load(open('"
                + _F["json"]
                + "'))['crew']; print('; '.join(m['name'] for m in sorted(c, key=lambda m: "
                "m['joined'])))\""
            },
            {"submit_output": True},
        ],
    ),
    # L2, wrong: 1204.67 is not 1204.7.
    Entry(
        "lanterns were sold",
        [
            {"bash": f"python3 -m zipfile -l {_F['xlsx']} | head -n 3"},
            {"submit": "1204.67"},
        ],
    ),
    # L3, correct: computed in the sandbox from the attachment.
    Entry(
        "heron or herons",
        [{"bash": f"echo $(( $(grep -c heron {_F['txt']}) * 9173 ))"}, {"submit_output": True}],
    ),
    # L3, correct: punctuation and spaces are dropped for strings.
    Entry("tavern where", [{"submit": "Zorblat's Half Moon Tavern"}]),
    # L3, never submits: ends on the message limit, scored on the text after FINAL ANSWER:.
    Entry("river feeds", [{"bash": "ls /"}, {"say": "FINAL ANSWER: Wrenmarrow River"}]),
]

EXPECTED_VALIDATION = {
    "level1_accuracy": 1.0,
    "level2_accuracy": 0.5,
    "level3_accuracy": 1.0,
    "accuracy": 6 / 7,
}
NEVER_SUBMITS = "river feeds"

TEST = [
    Entry(
        "word kettle",
        [
            {"bash": "grep -c kettle /shared_files/a09cd452-3bc3-5b50-aee7-f9f87624bb9f.txt"},
            {"submit_output": True},
        ],
    ),
    Entry("Ysolde Brack", [{"submit": "astrolabe"}]),
]
EXPECTED_TEST_ANSWERS = {"word kettle": "2", "Ysolde Brack": "astrolabe"}

GAIA_MINI = Path(__file__).parent / "fixtures" / "gaia-mini" / "GAIA"
EVALSCOPE_RUN = Path(__file__).parent / "fixtures" / "evalscope-gaia"

# gaia-mini's validation split, answered as evalscope's scripted model answered it (its fixture
# README), except the crew list, which this model orders right.
MINI_VALIDATION = [
    Entry(
        "calendar days",
        [
            {
                "bash": "echo $(( ( $(date -ud 2021-05-31 +%s) - $(date -ud 2021-03-01 +%s) ) / 86400 + 1 ))"
            },
            {"submit_output": True},
        ],
    ),
    Entry("tickets sold", [{"submit": "12,500"}]),
    Entry("numeric user ID", [{"bash": "getent passwd 0 | cut -d: -f1"}, {"submit_output": True}]),
    Entry("crew of a ship", [{"submit": "Ilse, Bartholomew, Quentin, Osric"}]),
    Entry("cylindrical water tank", [{"submit": "14.14"}]),
    Entry("daily rainfall", [{"submit": "3, 8, 11"}]),
    Entry("PDF memo", [{"say": "FINAL ANSWER: Harbour Mill Renovation"}]),
    Entry("ROT13", [{"submit": "It's a dog-eat-dog world!"}]),
    Entry("divisible by 7", [{"submit": "1298"}]),
]
MINI_CREW = "a860452c-65b6-50dd-945f-9f76900fe0e4"
MINI_MEMO = "e22f0425-9ca7-5328-a25e-0d40af1e246a"
MINI_TEST = [Entry("", [{"bash": "ls /shared_files 2>/dev/null | wc -l"}, {"submit_output": True}])]

GAIA_MEDIA = Path(__file__).parent / "fixtures" / "gaia-media"
"""Invented questions whose attachments are an image, sounds, a video, a PDF and a spreadsheet."""

TAVERN = "97438f3a-2717-5945-860a-97e6807cbc44"
"""gaia-tiny's level-3 question about the tavern (answer ``Zorblat's Half-Moon Tavern!``)."""
MEDIA_SPLIT = GAIA_MEDIA / "2023" / "validation"
MEDIA_FILES = {
    path.suffix.lstrip("."): path for path in MEDIA_SPLIT.iterdir() if path.stem != "metadata"
}
"""gaia-media's attachments by extension."""
