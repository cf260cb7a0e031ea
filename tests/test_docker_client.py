"""client.py against the real engine: what the Docker API calls return (execs: exec_stream)."""

from __future__ import annotations

import time
import uuid

import pytest

from inspect_gaia.sandboxes.docker import client

pytestmark = pytest.mark.docker


def test_requests_reuse_the_engine_connection(monkeypatch: pytest.MonkeyPatch) -> None:
    """docker-py pooled connections by full URL (25 pools): every request with a new container or
    exec id in its path opened a socket of its own and closed another pool's (31 here)."""
    from docker.transport import unixconn

    connects = 0
    connect = unixconn.UnixHTTPConnection.connect

    def counted(self: unixconn.UnixHTTPConnection) -> None:
        nonlocal connects
        connects += 1
        connect(self)

    monkeypatch.setattr(unixconn.UnixHTTPConnection, "connect", counted)
    for i in range(30):
        assert not client.running(f"gaia-test-client-none-{uuid.uuid4().hex[:8]}-{i}")
    assert connects <= 2  # the pool's one, and the client's version request made before it


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
