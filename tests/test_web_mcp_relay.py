"""The relay that holds a stdio MCP server in the sandbox, run here against the MCP SDK's server."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from inspect_gaia.web import mcp_relay

RELAY = mcp_relay.__file__
ROOT = Path(__file__).resolve().parents[1]


def call(
    directory: Path, method: str, params: Any = None, seconds: float = 20
) -> tuple[int, Any, str]:
    """``mcp_relay.py call`` as the sandbox runs it: (exit status, answer, stderr)."""
    done = subprocess.run(
        [sys.executable, RELAY, "call", str(directory), str(seconds)],
        input=json.dumps({"method": method, "params": params}),
        capture_output=True,
        text=True,
        timeout=seconds + 30,
    )
    answer = json.loads(done.stdout) if done.stdout else None
    return done.returncode, answer, done.stderr


def tool(directory: Path, name: str, **arguments: Any) -> tuple[int, Any, str]:
    return call(directory, "tools/call", {"name": name, "arguments": arguments})


def serve(directory: Path, *command: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, RELAY, "serve", str(directory), "--", *command], cwd=ROOT
    )


@pytest.fixture
def relayed(tmp_path: Path) -> Iterator[Path]:
    relay = serve(tmp_path, sys.executable, "-m", "support.mcp_standin")
    yield tmp_path
    relay.kill()
    relay.wait()


def test_requests_reach_the_one_server_and_come_back(relayed: Path) -> None:
    status, answer, _ = tool(relayed, "echo", text="first")
    assert status == 0 and answer["result"]["content"] == [{"type": "text", "text": "first"}]
    _, listed, _ = call(relayed, "tools/list")
    assert {t["name"] for t in listed["result"]["tools"]} >= {"echo", "slow", "crash"}
    _, image, _ = tool(relayed, "picture")
    (content,) = image["result"]["content"]
    assert content["type"] == "image" and content["mimeType"] == "image/png"
    _, failed, _ = tool(relayed, "fail", why="no such element")
    assert failed["result"]["isError"] is True, "the server's own error is its answer"


def test_requests_at_once_each_get_their_own_answer(relayed: Path) -> None:
    tool(relayed, "echo", text="started")
    began = time.monotonic()
    with ThreadPoolExecutor(4) as pool:
        answers = list(
            pool.map(lambda n: tool(relayed, "slow", text=f"n{n}", seconds=1.0 - n / 5), range(4))
        )
    texts = [a[1]["result"]["content"][0]["text"] for a in answers]
    assert texts == ["n0", "n1", "n2", "n3"]
    assert time.monotonic() - began < 3.5, "served side by side, not one after another"


def test_a_crash_answers_the_call_in_flight_and_every_later_one(relayed: Path) -> None:
    tool(relayed, "echo", text="up")
    status, answer, _ = tool(relayed, "crash")
    assert status == 0
    why = answer["relay_error"]
    assert "status 7" in why and "crashes on purpose" in why
    began = time.monotonic()
    status, answer, stderr = tool(relayed, "echo", text="again")
    assert status == 3 and answer is None and "status 7" in stderr
    assert time.monotonic() - began < 5, "a dead server is reported at once, not waited for"


def test_a_crash_among_calls_in_flight_answers_each_of_them(relayed: Path) -> None:
    """Issue #48: relay errors at the concurrency an agent makes them (several tool calls in one
    turn, run at once): the server dies under three slow calls; each gets its own answer, at once."""
    tool(relayed, "echo", text="up")
    began = time.monotonic()
    with ThreadPoolExecutor(4) as pool:
        slow = [pool.submit(tool, relayed, "slow", text=f"n{n}", seconds=30) for n in range(3)]
        time.sleep(1.0)  # the three are in the server's hands
        crashed = pool.submit(tool, relayed, "crash").result()
        answers = [future.result() for future in slow]
    assert crashed[0] == 0 and "status 7" in crashed[1]["relay_error"]
    for status, answer, _ in answers:
        assert status == 0 and "status 7" in answer["relay_error"], answer
    assert time.monotonic() - began < 10, "calls in flight are answered when the server dies"


def test_a_server_that_cannot_start_says_why(tmp_path: Path) -> None:
    relay = serve(tmp_path, sys.executable, "-c", "import sys; sys.exit('no browser here')")
    status, answer, stderr = call(tmp_path, "tools/list")
    assert relay.wait(10) == 3
    assert status == 3 and answer is None
    assert "status 1" in stderr and "no browser here" in stderr


def test_no_server_at_all_is_given_up_on_after_the_wait(tmp_path: Path) -> None:
    began = time.monotonic()
    status, answer, stderr = call(tmp_path, "tools/list", seconds=1)
    assert status == 4 and answer is None and "within 1 s" in stderr
    assert 1 <= time.monotonic() - began < 10


def test_stop_kills_the_relay_and_everything_under_it(tmp_path: Path) -> None:
    relay = serve(tmp_path, sys.executable, "-m", "support.mcp_standin")
    assert call(tmp_path, "tools/list")[0] == 0
    (server,) = _children(relay.pid)
    stopped = subprocess.run([sys.executable, RELAY, "stop", str(relay.pid)], timeout=30)
    assert stopped.returncode == 0
    assert relay.wait(10) == -9
    deadline = time.monotonic() + 10
    while Path(f"/proc/{server}").exists() and _state(server) != "Z":
        assert time.monotonic() < deadline, "the server outlived the stop"
        time.sleep(0.05)


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if entry.name.isdigit() and int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found.append(int(entry.name))
    return found


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"


def test_usage_is_refused_in_one_line() -> None:
    done = subprocess.run([sys.executable, RELAY, "serve"], capture_output=True, text=True)
    assert done.returncode == 2 and done.stderr.startswith("usage: mcp_relay.py")


def test_an_answer_over_the_bound_is_an_mcp_error_and_characters_go_as_utf8(
    relayed: Path,
) -> None:
    # 1.2 M CJK characters, twice (the SDK answers content and structuredContent): 7.2 MB as
    # UTF-8, 14.4 MB escaped (past the exec's 10 MiB: the sample ended)
    text = "漢" * 1_200_000
    done = subprocess.run(
        [sys.executable, RELAY, "call", str(relayed), "60"],
        input=json.dumps(
            {"method": "tools/call", "params": {"name": "echo", "arguments": {"text": text}}}
        ).encode(),
        capture_output=True,
        timeout=90,
    )
    assert done.returncode == 0 and len(done.stdout) < mcp_relay.MAX_ANSWER
    assert json.loads(done.stdout)["result"]["content"][0]["text"] == text
    status, answer, _ = tool(relayed, "echo", text="a" * (mcp_relay.MAX_ANSWER + 1))
    assert status == 0 and "result" not in answer
    message = answer["error"]["message"]
    assert (
        message.startswith("the answer is 16.0 MiB, over the relay's 8 MiB")
        and "ask for less" in message
    )
    assert tool(relayed, "echo", text="still up")[1]["result"]["content"][0]["text"] == "still up"


def test_the_tools_left_out_are_refused_by_the_relay_itself(tmp_path: Path) -> None:
    relay = subprocess.Popen(
        [sys.executable, RELAY, "serve", str(tmp_path), "--tools", "echo,picture", "--"]
        + [sys.executable, "-m", "support.mcp_standin"],
        cwd=ROOT,
    )
    try:
        _, listed, _ = call(tmp_path, "tools/list")
        assert sorted(t["name"] for t in listed["result"]["tools"]) == ["echo", "picture"]
        status, answer, _ = tool(tmp_path, "crash")
        assert status == 0 and answer["error"]["message"] == "crash is not offered in this harness"
        assert tool(tmp_path, "echo", text="alive")[1]["result"]["content"][0]["text"] == "alive"
    finally:
        relay.kill()
        relay.wait()
