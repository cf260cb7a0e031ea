"""client.py against the real engine: what the Docker API calls return."""

from __future__ import annotations

import http.client
import time
import uuid
from collections.abc import Iterator

import pytest

from inspect_gaia._docker import client
from tests.helpers import SANDBOX_IMAGE

pytestmark = pytest.mark.docker


@pytest.fixture
def container() -> Iterator[str]:
    name = f"gaia-test-client-{uuid.uuid4().hex[:8]}"
    started = client.start_container(
        name,
        {"image": SANDBOX_IMAGE, "command": ["tail", "-f", "/dev/null"], "host_config": {}},
        {"inspect_gaia.sandbox": "gaia-docker", "inspect_gaia.test": "client"},
    )
    try:
        yield started
    finally:
        client.remove_container(started)


def test_output_that_arrives_with_the_upgrade_response_is_kept(
    container: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At 64 samples at once a client reads the upgrade response late, and the command's output
    arrives in the same read: it sat in http.client's buffer, and the exec returned exit 0 and no
    output (1 of 165 samples of the GAIA-size load answered '')."""
    begin = http.client.HTTPResponse.begin

    def late(self: http.client.HTTPResponse) -> None:
        time.sleep(0.5)  # the command has run and written by now
        begin(self)

    monkeypatch.setattr(http.client.HTTPResponse, "begin", late)
    code, out, err = client.exec_command(
        container, ["sh", "-c", "echo twenty; echo oops >&2"], None, "/", None, None, 1 << 20
    )
    assert (code, out, err) == (0, b"twenty\n", b"oops\n")


def test_execs_reuse_the_engine_connection(container: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """docker-py pooled connections by full URL (25 pools): each exec's create and inspect
    requests opened a socket of their own, two per exec. Only the exec's hijacked stream may."""
    from docker.transport import unixconn

    connects = 0
    connect = unixconn.UnixHTTPConnection.connect

    def counted(self: unixconn.UnixHTTPConnection) -> None:
        nonlocal connects
        connects += 1
        connect(self)

    monkeypatch.setattr(unixconn.UnixHTTPConnection, "connect", counted)
    for _ in range(20):
        assert client.exec_command(container, ["true"], None, "/", None, None, 1024)[0] == 0
    assert connects <= 20


def test_a_killed_container_seen_still_running_is_waited_for(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """CI: an exec ended by ``docker kill`` was seen before the engine marked the container stopped,
    so one look said "running" and the lost sandbox passed for a failed command (no retry)."""
    looks = iter([True, True, True, False])
    monkeypatch.setattr(client, "running", lambda container: next(looks))
    assert client.stops_within("gaia-x", 3.0)
    monkeypatch.setattr(client, "running", lambda container: True)
    started = time.monotonic()
    assert not client.stops_within("gaia-x", 0.3)
    assert 0.3 <= time.monotonic() - started < 1.5
