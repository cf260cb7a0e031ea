"""A real run: a sample that reads a stand-in mirror or a page listing its question with its
answer is flagged with that evidence; one that reads its own attachment and an innocent page is
not. The pages are served by a host-side server that only the engine's bridge address reaches."""

from __future__ import annotations

from pathlib import Path

import pytest
from inspect_ai.log import EvalSample
from inspect_ai.model import ChatMessageAssistant, ChatMessageTool

from support.answer_pages import (
    GAIA_LEAK,
    MIRROR_HOST,
    MIRROR_PATH,
    NOTES_PATH,
    ORRINDALE,
    PELLBROOK,
    SALTMERE,
    WEATHER,
    WEATHER_PATH,
    bridge_address,
    leak_agent,
    serve_pages,
)
from support.scripted_model import Entry
from tests.helpers import Play, docker_leftovers, eval_gaia
from tests.scenario import GAIA_TINY, LAGOON

pytestmark = pytest.mark.docker


def _sample(samples: list[EvalSample], word: str) -> EvalSample:
    return next(s for s in samples if word in str(s.input))


def test_reading_a_mirror_or_a_listing_is_flagged_reading_the_own_attachment_is_not(
    sandbox_image: str, scripted: Play, tmp_path: Path
) -> None:
    before = docker_leftovers()
    address = bridge_address()
    with serve_pages(address) as (port, seen):
        scripted(leak_agent(via=f"{address}:{port}"))
        log = eval_gaia(tmp_path, dataset_path=str(GAIA_LEAK), image=sandbox_image)
    assert log.status == "success" and log.samples is not None
    assert sorted(seen) == sorted(
        [
            f"{MIRROR_HOST} {MIRROR_PATH}",
            f"orrindale-notes.example {NOTES_PATH}",
            f"weather.example {WEATHER_PATH}",
        ]
    ), "every page was fetched for real"
    for sample in log.samples:  # a flag never changes the score
        assert sample.scores is not None and sample.scores["gaia_scorer"].value == "C", sample.id

    mirror = _sample(log.samples, SALTMERE)
    flags = (mirror.scores or {})["gaia_scorer"].metadata["contamination"]  # type: ignore[index]
    assert [(f["kind"], f["where"], f["tool"]) for f in flags] == [
        ("answer_source", "call", "bash"),
        ("question_with_answer", "result", "bash"),
    ]
    assert flags[0]["url"] == f"http://{MIRROR_HOST}{MIRROR_PATH}"
    assert flags[0]["source"] == "GAIA on Hugging Face"
    assert "Thistlewood" in flags[1]["excerpt"]
    assert isinstance(mirror.messages[flags[0]["message"]], ChatMessageAssistant)
    assert isinstance(mirror.messages[flags[1]["message"]], ChatMessageTool)

    listing = _sample(log.samples, ORRINDALE)
    (flag,) = (listing.scores or {})["gaia_scorer"].metadata["contamination"]  # type: ignore[index]
    assert (flag["kind"], flag["where"]) == ("question_with_answer", "result")
    assert "41" in flag["excerpt"] and "url" not in flag
    assert "Orrindale" in listing.messages[flag["message"]].text

    own = _sample(log.samples, PELLBROOK)
    assert "contamination" not in ((own.scores or {})["gaia_scorer"].metadata or {})
    outputs = [m.text for m in own.messages if isinstance(m, ChatMessageTool)]
    assert "Nineteen Locks" in outputs[0] and "Pellbrook" in outputs[0], "it read its attachment"
    assert WEATHER in outputs[1], "and the innocent page"
    assert docker_leftovers() == before


# Issue #33: copies of the answers the list did not know. The commands only print the addresses:
# no request leaves the sandbox, and the call alone is the evidence.
NEW_SOURCES = {
    "https://raw.githubusercontent.com/RUC-NLPIR/WebThinker/refs/heads/main/data/GAIA/dev.json": (
        "WebThinker's GAIA file"
    ),
    "https://huggingface.co/buckets/proy/GAIA-bucket/tree/2023": "GAIA bucket on the Hub",
    "https://huggingface.co/datasets/Intelligent-Internet/GAIA-Subset-Benchmark": (
        "GAIA subsets and copies on the Hub"
    ),
}


def test_the_new_answer_sources_are_flagged_in_a_run(
    sandbox_image: str, scripted: Play, tmp_path: Path
) -> None:
    scripted([Entry("", [{"bash": f"echo {url}"} for url in NEW_SOURCES] + [{"submit": "x"}])])
    log = eval_gaia(tmp_path, dataset_path=str(GAIA_TINY), image=sandbox_image, ids=LAGOON)
    assert log.status == "success" and log.samples is not None
    (sample,) = log.samples
    flags = (sample.scores or {})["gaia_scorer"].metadata["contamination"]  # type: ignore[index]
    calls = {f["url"]: f["source"] for f in flags if f["where"] == "call"}
    assert calls == NEW_SOURCES
