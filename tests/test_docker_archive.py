"""archive.py against the real engine: files out of a container as a local read would give them."""

from __future__ import annotations

import errno
import uuid
from collections.abc import Iterator

import anyio
import pytest

from inspect_gaia.sandboxes.docker import archive, client, exec_stream
from tests.helpers import SANDBOX_IMAGE

pytestmark = pytest.mark.docker

LINKS = (
    "printf 'PNG bytes' > /tmp/made.png && ln -s made.png /tmp/relative.png && "
    "mkdir -p /tmp/d && ln -s ../made.png /tmp/d/up.png && ln -s /tmp/relative.png /tmp/chain.png "
    "&& ln -s /../../../../tmp/made.png /tmp/escape.png && ln -s /tmp/loop-b /tmp/loop-a && "
    "ln -s /tmp/loop-a /tmp/loop-b && ln -s /tmp/nowhere /tmp/dangling.png && ln -s /tmp/d /tmp/dl"
)


@pytest.fixture
def container() -> Iterator[str]:
    name = f"gaia-test-archive-{uuid.uuid4().hex[:8]}"
    started = client.start_container(
        name,
        {"image": SANDBOX_IMAGE, "command": ["tail", "-f", "/dev/null"], "host_config": {}},
        {"inspect_gaia.sandbox": "gaia-docker", "inspect_gaia.test": "archive"},
    )
    try:
        code, _, err = anyio.run(
            exec_stream.run, started, ["sh", "-c", LINKS], None, "/", None, None, 1 << 20
        )
        assert code == 0, err
        yield started
    finally:
        client.remove_container(started)


def test_symbolic_links_are_followed_inside_the_container(container: str) -> None:
    """Issue #17 finding 6: a link was refused as "not a regular file" (compose follows it)."""
    for link in ("/tmp/relative.png", "/tmp/d/up.png", "/tmp/chain.png", "/tmp/escape.png"):
        assert archive.get_file(container, link, link) == b"PNG bytes", link
    with pytest.raises(FileNotFoundError):
        archive.get_file(container, "/tmp/dangling.png", "dangling.png")
    with pytest.raises(IsADirectoryError):
        archive.get_file(container, "/tmp/dl", "dl")


def test_a_symbolic_link_loop_is_an_eloop_not_an_engine_error(container: str) -> None:
    """Issue #17 finding 6: the engine's 500 reached view_file and ended the whole sample."""
    for path in ("/tmp/loop-a", "/tmp/loop-a/x.png"):
        with pytest.raises(OSError) as raised:
            archive.get_file(container, path, "x.png")
        assert raised.value.errno == errno.ELOOP and raised.value.filename == "x.png"
