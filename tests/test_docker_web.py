"""The browser and the page reader in the sandbox (``-T browser=true -T web_reader=true``).

A scripted agent answers gaia-web's four questions by browsing a stand-in web served on the Docker
bridge's address (a link to click, a search form, a table, a PDF saved into the sandbox and read
with bash), reading refs and answers off the pages it is shown; then the edge cases (a page that
never loads, a page of several MB, a browser killed mid-sample) end as tool errors the agent reads.
The same questions behind the egress proxy are ``test_docker_web_egress.py``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from inspect_ai.log import EvalLog, EvalSample
from inspect_ai.model import ChatMessageTool, ContentImage

from inspect_gaia.errors import GaiaParameterError
from inspect_gaia.image_layout import OFFLINE_BROWSER_TAG
from inspect_gaia.task import gaia
from inspect_gaia.web import BROWSER_TOOLS
from inspect_gaia.web.pages import PAGE_CHARS
from support.answer_pages import bridge_address
from support.scripted_model import Entry
from support.web_pages import serve_web, web_agent
from tests.helpers import Play, eval_gaia, invoke, metrics, running_containers

pytestmark = pytest.mark.docker

GAIA_WEB = Path(__file__).parent / "fixtures" / "gaia-web"
SITES = ("wrenfold", "cobblemere", "brackwater", "harrowgate")


@pytest.fixture(scope="module")
def browser_image() -> str:
    """The browser image; missing, the test fails (CI builds it in .ci/sandbox-images.sh)."""
    from inspect_gaia.sandboxes.docker.engine import local_image_id

    assert local_image_id(OFFLINE_BROWSER_TAG) is not None, (
        f"{OFFLINE_BROWSER_TAG} is missing — build it with "
        "`inspect-gaia image build --offline --browser`"
    )
    return OFFLINE_BROWSER_TAG


@pytest.fixture(scope="module")
def web() -> Iterator[str]:
    """The stand-in web's ``host:port``, on the bridge address sandboxes reach."""
    with serve_web(bridge_address()) as where:
        yield where


def _run(tmp_path: Path, image: str, **params: object) -> EvalLog:
    return eval_gaia(
        tmp_path,
        dataset_path=str(GAIA_WEB),
        image=image,
        browser=True,
        web_reader=True,
        **params,
    )


def _tool_messages(sample: EvalSample) -> list[ChatMessageTool]:
    return [m for m in sample.messages if isinstance(m, ChatMessageTool)]


def _sample(log: EvalLog, word: str) -> EvalSample:
    assert log.samples is not None
    return next(s for s in log.samples if word in str(s.input))


def test_four_questions_answered_by_browsing(
    tmp_path: Path, scripted: Play, browser_image: str, web: str
) -> None:
    model = scripted(web_agent(dict.fromkeys(SITES, web)))
    log = _run(tmp_path, browser_image)
    assert log.status == "success"
    assert metrics(log)["accuracy"] == 1.0
    assert log.samples is not None and all(s.error is None for s in log.samples)
    # the page text reached the model: the bulletin after the click, the results after the form
    wrenfold = [m.text for m in _tool_messages(_sample(log, "Wrenfold"))]
    assert 'link "Yearly bulletin" [ref=' in wrenfold[0]
    assert "emblem of Wrenfold is the grey heron" in wrenfold[1]
    assert "Page URL: http://" in wrenfold[1] and "/wrenfold/bulletin" in wrenfold[1]
    cobblemere = [m.text for m in _tool_messages(_sample(log, "Cobblemere"))]
    assert "Lantern Guild: founded in 1742" in cobblemere[1]
    saved = [m.text for m in _tool_messages(_sample(log, "Harrowgate"))]
    assert "to /downloads/report.pdf" in saved[2] and "application/pdf" in saved[2]
    # what the model is told never carries Playwright's code or links to files it cannot open
    for sample in log.samples:
        for message in _tool_messages(sample):
            assert "Ran Playwright code" not in message.text
            assert "[Snapshot](" not in message.text
    # the browser's tools (and the reader's fetch) were offered, and recorded in the provenance
    offered = model.tools_offered[0]
    first = offered.index(BROWSER_TOOLS[0])
    assert offered[first : first + len(BROWSER_TOOLS) + 1] == [*BROWSER_TOOLS, "fetch"]
    record = log.eval.metadata["gaia"]  # type: ignore[index]
    assert record["web_tools"]["browser"] and record["web_tools"]["web_reader"]
    assert record["web_tools"]["versions"]["playwright_mcp"]
    assert record["tools"][-1] == "fetch"


def test_reader_screenshot_and_a_sample_that_never_browses(
    tmp_path: Path, scripted: Play, browser_image: str, web: str
) -> None:
    """``fetch`` reads a page as Markdown in the sandbox; a screenshot is an image for the model;
    a sample that never calls a browser tool starts no browser at all."""
    scripted(
        [
            Entry(
                "Wrenfold",
                [
                    {"call": "fetch", "args": {"url": f"http://{web}/wrenfold/bulletin"}},
                    {"call": "browser_navigate", "args": {"url": f"http://{web}/wrenfold/"}},
                    {"call": "browser_take_screenshot", "args": {}},
                    {"submit": "grey heron"},
                ],
            ),
            Entry(
                "Brackwater",
                [{"bash": "ps -eo comm; python3 -c 'import mcp' 2>&1 | tail -1"}, {"submit": "6"}],
            ),
        ]
    )
    log = _run(tmp_path, browser_image, ids=_ids("Wrenfold", "Brackwater"))
    assert log.status == "success"
    fetched, _, shot, _ = _tool_messages(_sample(log, "Wrenfold"))
    assert "emblem of Wrenfold is the grey heron" in fetched.text
    assert any(isinstance(part, ContentImage) for part in shot.content)
    # the detection cannot read a picture: it says so (#39 L4(c))
    score = (_sample(log, "Wrenfold").scores or {})["gaia_scorer"]
    flags = (score.metadata or {}).get("contamination", [])
    assert ("unscanned", "browser_take_screenshot", 1) in [
        (f["kind"], f.get("tool"), f.get("images")) for f in flags
    ]
    processes = _tool_messages(_sample(log, "Brackwater"))[0].text
    assert "chromium" not in processes.split() and "node" not in processes.split()
    # the reader's packages are on its own path only: the agent's Python is the attachments one
    assert "No module named 'mcp'" in processes


def test_edge_cases_are_tool_errors_the_agent_reads(
    tmp_path: Path, scripted: Play, browser_image: str, web: str
) -> None:
    """A page that never loads, a page of several MB, a browser killed mid-sample."""
    scripted(
        [
            Entry(
                "Wrenfold",
                [
                    {"call": "browser_navigate", "args": {"url": f"http://{web}/slow"}},
                    {"call": "browser_navigate", "args": {"url": f"http://{web}/big"}},
                    {"call": "browser_navigate", "args": {"url": f"http://{web}/long"}},
                    {"call": "browser_snapshot", "args": {"start": PAGE_CHARS}},
                    {"bash": "pkill -KILL -f playwright-mcp; sleep 1; pgrep -c chromium || true"},
                    {"call": "browser_navigate", "args": {"url": f"http://{web}/wrenfold/"}},
                    {"call": "browser_navigate", "args": {"url": f"http://{web}/wrenfold/"}},
                    {"submit": "grey heron"},
                ],
            )
        ]
    )
    log = _run(tmp_path, browser_image, ids=_ids("Wrenfold"))
    sample = _sample(log, "Wrenfold")
    assert sample.error is None and log.status == "success"
    slow, big, long, more, _, after_kill, again, _ = _tool_messages(sample)
    assert slow.error is not None and "Timeout 30000ms exceeded" in slow.error.message
    assert big.error is not None and "too many to read" in big.error.message
    assert "browser_download" in big.error.message
    assert long.error is None and "Row 0 of a very long page" in long.text
    assert f"call browser_snapshot with start={PAGE_CHARS}" in long.text
    assert f"characters {PAGE_CHARS:,}–" in more.text and "Row 0 of" not in more.text
    # the killed browser: one error that says so, then a fresh browser that works
    assert after_kill.error is not None, after_kill.text
    assert "the next call starts a fresh one" in after_kill.error.message
    assert again.error is None and "Town of Wrenfold" in again.text
    assert "started again" in again.text


def test_an_image_without_the_browser_stops_the_run_before_any_sandbox(
    sandbox_image: str, browser_image: str, gaia_tiny: Path
) -> None:
    before = running_containers()
    with pytest.raises(GaiaParameterError) as caught:
        gaia(dataset_path=str(GAIA_WEB), image=sandbox_image, browser=True)
    assert str(caught.value) == (
        f"-T browser=true: the sandbox image {sandbox_image} has no browser — build one with "
        "`inspect-gaia image build --offline --browser` and pass "
        f"`-T image={OFFLINE_BROWSER_TAG}`"
    )
    assert running_containers() == before
    # doctor --browser says the same, and passes the browser image with its versions
    code, out, _ = invoke(
        *("doctor", "--image", sandbox_image, "--browser", "--dataset-path", str(gaia_tiny)),
        "--json",
    )
    check = next(c for c in json.loads(out) if c["name"] == "browser")
    assert code == 1 and not check["ok"] and "has no browser or page reader" in check["detail"]
    code, out, _ = invoke("doctor", "--image", browser_image, "--browser", "--json")
    check = next(c for c in json.loads(out) if c["name"] == "browser")
    assert check["ok"] and "playwright_mcp 0.0.76" in check["detail"]


def _ids(*words: str) -> str:
    import pyarrow.parquet as pq

    rows = pq.read_table(GAIA_WEB / "2023" / "validation" / "metadata.parquet").to_pylist()
    return ",".join(r["task_id"] for r in rows if any(w in r["Question"] for w in words))
