"""Each sample's part of the egress proxy's record: who a client is, and its lines into the sample.

The proxy writes one line per request into the file of the sandbox that made it
(``_egress/record.py``); it knows a sandbox by its address on the run's internal network, which
the sandbox gets only when it starts. So once a sample's container runs, ``SandboxRecord.start``
writes ``clients/<address>`` (the container's name) into the proxy, and when the sample ends,
before its container goes (so before its address can be another sandbox's), ``finish`` reads the
container's file back and puts its requests into the sample: the store (``web_record.STORE_KEY``)
and an info event that lists them in ``inspect view``.

Attributing by address, named by the run: a sandbox's address is its own while it runs (Docker
hands an address out again only once its container is removed, after ``finish``), and the name
the proxy writes under is the container's, unique per sample and epoch. A request made in the
milliseconds between the container's start and ``start`` (nothing of the agent's runs then) is in
the proxy's ``_unattributed`` file.

``--no-sandbox-cleanup`` skips ``finish`` (inspect calls no sample cleanup then): the files stay in
the kept proxy (``docker cp``).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..web_record import INFO_SOURCE, STORE_KEY, parse_lines, summary
from . import archive, client
from .egress import RECORD_DIR, Egress


@dataclass
class SandboxRecord:
    """One sandbox's requests, as its run's proxy records them."""

    egress: Egress
    name: str
    """The sandbox's container name: its file in the proxy."""

    def start(self, container: str) -> None:
        """Tell the proxy which sandbox the container's address is (blocking).

        A container with no address on the run's network reaches no proxy: nothing to name.
        """
        networks = client.api().inspect_container(container)["NetworkSettings"]["Networks"]
        address = next(
            (
                str(v["IPAddress"])
                for v in networks.values()
                if v.get("NetworkID") == self.egress.network and v.get("IPAddress")
            ),
            None,
        )
        if address is not None:
            path = f"{RECORD_DIR}/clients/{address}"
            archive.put_file(self.egress.proxy, path, self.name.encode())

    def read(self) -> str:
        """The sandbox's lines so far (blocking; none yet: empty)."""
        path = f"{RECORD_DIR}/{self.name}.jsonl"
        try:
            return archive.get_file(self.egress.proxy, path, path).decode("utf-8", errors="replace")
        except FileNotFoundError:
            return ""

    async def finish(self) -> None:
        """Put the sandbox's requests into its sample (store and transcript).

        A record that cannot be read is said in the transcript, and the store holds none (a
        reader then counts the sample as not recorded, never as having read nothing).
        """
        from inspect_ai.log import transcript
        from inspect_ai.util import store

        try:
            text = await client.call(self.read)
        except Exception as ex:
            transcript().info(
                f"The run's egress proxy's record of this sample could not be read: "
                f"{client.first_line(ex)}",
                source=INFO_SOURCE,
            )
            return
        requests = parse_lines(text)
        store().set(STORE_KEY, [r.as_dict() for r in requests])
        transcript().info(summary(requests), source=INFO_SOURCE)
