"""mitmproxy addon of the egress proxy in a replayed run: the recorded web, and nothing else.

Runs elsewhere: in the proxy's container, under mitmproxy, in place of the guard
(``mitmdump -s replay.py -s record.py``); standard library only besides (``shipped``).

``-T web_replay=ARCHIVE``: the run unpacks the archive a ``-T web_record=bodies`` run wrote into
``gaia_replay`` and starts the proxy on the sandboxes' network alone (no way out at all). Every
request is answered here, before any server is asked: with the recorded response whose match key
(``replay_match.match_key``: method and normalised URL) it has, or with a 403 whose body says
``not in the recorded web``. The recorder writes both down as the guard's decisions are
(``allowed``, ``replayed``; ``refused``, ``not in the recorded web``). The container's own health
probes (loopback) are answered "alive".

A recorded body is read from its file when it is served (bodies over the per-body cap were never
kept, so at most that cap is held).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from mitmproxy import ctx, http  # type: ignore[import-not-found]

if TYPE_CHECKING:  # the package's names; in the proxy's container they sit beside this file
    from .failclosed import DECISION, fail_closed, log
    from .replay_match import BODIES, REFUSAL, directory_index, match_key
else:
    from failclosed import DECISION, fail_closed, log
    from replay_match import BODIES, REFUSAL, directory_index, match_key

_DROPPED = {"transfer-encoding", "content-length", "connection", "keep-alive"}


class Replay:
    """The addon: recorded responses by match key."""

    def __init__(self) -> None:
        """Nothing served until ``gaia_replay`` is set."""
        self.directory = ""
        self.responses: dict[str, dict[str, Any]] = {}

    def load(self, loader: Any) -> None:
        """Declare the option."""
        loader.add_option("gaia_replay", str, "", "The unpacked archive the run replays")

    def configure(self, updated: set[str]) -> None:
        """Read the archive's record."""
        if "gaia_replay" in updated and ctx.options.gaia_replay:
            self.directory = ctx.options.gaia_replay
            self.responses = directory_index(self.directory)
            log({"replaying": len(self.responses)})

    @fail_closed
    def request(self, flow: http.HTTPFlow) -> None:
        """Answer from the archive, or refuse: never a server."""
        peer = str(flow.client_conn.peername[0]).removeprefix("::ffff:")
        if peer in ("127.0.0.1", "::1"):
            flow.response = http.Response.make(200, b"alive\n", {"content-type": "text/plain"})
            return
        url = flow.request.pretty_url
        found = self.responses.get(match_key(flow.request.method, url))
        if found is None:
            flow.metadata[DECISION] = ("refused", REFUSAL)
            text = f"inspect_gaia: {REFUSAL}: {url} (this run replays an archive)\n"
            flow.response = http.Response.make(403, text.encode(), {"content-type": "text/plain"})
            return
        with open(os.path.join(self.directory, BODIES, found["sha256"]), "rb") as f:
            body = f.read()
        headers = [
            (str(k).encode(), str(v).encode())
            for k, v in found["headers"]
            if str(k).lower() not in _DROPPED
        ]
        response = http.Response.make(found["status"], b"", headers)
        response.headers["content-length"] = str(len(body))
        response.raw_content = body
        flow.metadata[DECISION] = ("allowed", "replayed")
        flow.response = response


addons = [Replay()]
