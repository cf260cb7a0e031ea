"""The egress proxy of a gaia-docker run: it blocks, records or replays (``egress.spec``).

Per run (and per list of rules), started by ``task_init`` before any sample:

* an *internal* bridge network for the sandboxes: no route off the host, no DNS for outside names,
  and no address of the host's on it (Docker's ``inhibit_ipv4``: a host service listening on all
  addresses is no way out), so a sandbox reaches nothing but what is on that network;
* an ordinary bridge network, the proxy's way out;
* the proxy: mitmproxy (the ``egress`` wing's programs) on both networks, with the run's rules and a
  CA it generates on its first start, so a fresh CA per run; kept answering by its supervisor, which
  restarts it in place (same addresses, same CA), and watched by the run (``egress_watch``);
* what it may not reach besides the answer sources: the host's addresses (every bridge network's
  gateway, the host's interfaces) and every private one (``egress/netpolicy.py``), but the
  stand-in networks a test names in ``TEST_NETWORKS_ENV`` (whose certificates it verifies
  against the test's CA, ``TEST_CA_ENV``, in place of the public ones).

Each sandbox of the run joins the internal network with ``HTTP(S)_PROXY`` pointing at the proxy,
and the run's CA written into its trust store before it starts (``sample_kwargs``,
``sample_files``). Everything is labelled as the run's other resources are, so the run's cleanup,
the orphan sweep and ``inspect sandbox cleanup gaia-docker`` remove it with them.

One trade-off: on the internal network, traffic between containers stays on. Docker's switch for
it (``enable_icc``) is per network, and with it off the sandboxes could not reach the proxy
either; so in a blocking run a sandbox can reach another sandbox of the run (each holds only its
own attachment), which it cannot in an ordinary run. It cannot forge frames on that network: a
sandbox has no ``NET_RAW`` (``sandboxes/spec.py``, "Capabilities"), so no ARP reply of its own
can take another sample's proxy traffic.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ...egress import PROXY_IMAGE
from ...egress.spec import EgressSpec
from ...errors import GaiaError
from ...image_layout import BUNDLE, CA_FILE
from ...shipped import PROXY_PROGRAMS, source
from . import archive, client
from .cleanup import RUN_LABEL, RunScoped
from .cleanup import labels as run_labels
from .egress_archive import body_options, manifest, send_replay
from .egress_reach import TEST_CA_ENV, TEST_CA_PATH, host_addresses, test_networks
from .egress_watch import SampleCommands, Watch

EGRESS_LABEL = "inspect_gaia.egress"
PORT = 3128
READY_TIMEOUT = 60.0
_PROXY_CA = "/egress/conf/mitmproxy-ca-cert.pem"
RECORD_DIR = "/egress/record"
REPLAY_DIR = "/egress/replay"
"""Where a replay's archive is unpacked (``-T web_replay``; ``egress/replay.py``)."""
"""Where the proxy records each sandbox's requests (``egress/recorder.py``, ``egress_record``)."""
_READY = '{"inspect_gaia": {"up": '
"""The supervisor's line once the proxy answers (``egress/supervise.py``)."""
MEMORY = "1g"
"""The proxy's memory limit: bodies stream, so it holds connections, not downloads."""
SOCKET_BUFFERS = {
    "net.ipv4.tcp_rmem": "4096 131072 1048576",
    "net.ipv4.tcp_wmem": "4096 16384 1048576",
}
"""The kernel's TCP buffers in the proxy's container: 1 MiB per socket and direction at most
(Linux grows them to 4-6 MiB, more on some hosts). A client that stops reading parks what is in
flight there, not in the proxy (HTTP/1.1: ``egress/addon.py``); on a cgroup v2 host they count
against the container's memory, so a sandbox's 64 stalled downloads hold at most 128 MiB of it.
1 MiB of window is 20 MB/s per download at 50 ms from the server."""
STREAM_ABOVE = "64k"
"""Bodies larger stream even where the addon cannot say so (a refused request's)."""
_NO_PROXY = "localhost,127.0.0.1,::1"


@dataclass
class Egress:
    """A started proxy: its networks, its address on the sandboxes' network, its CA."""

    network: str
    outside: str
    proxy: str
    address: str
    ca: bytes
    bundles: dict[str, bytes] = field(default_factory=dict)
    """The CA bundle a sandbox of each image gets (its image's, plus ``ca``)."""
    watch: Watch | None = None
    """Its outages (``egress_watch``); ``None`` for an ``Egress`` made without a container."""
    archive: str | None = None
    """The file name of the run's archive of bodies (``egress_archive``); ``None``: none kept."""
    log_location: str | None = None
    """The run's log, as inspect names it to its samples: the archive goes beside it."""
    logs: set[str] = field(default_factory=set)
    """Every log whose samples it served (the archive's hash goes into each one's record)."""


@dataclass
class EgressState:
    """The run's proxies, one per list of rules (one inspect sandbox lifecycle scope)."""

    proxies: dict[str, Egress] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)


_EGRESS_STATE = RunScoped(EgressState)


def egress_state() -> EgressState:
    """This run's state (``cleanup.RunScoped``: made once, samples ask from several threads)."""
    return _EGRESS_STATE.get()


def wanted(service: Mapping[str, Any]) -> EgressSpec | None:
    """The egress the service's sandboxes go through, when they have a proxy."""
    return EgressSpec.of(service)


def _key(spec: EgressSpec) -> str:
    return hashlib.sha256(json.dumps(spec.as_json(), sort_keys=True).encode()).hexdigest()


def ensure(task_name: str, spec: EgressSpec) -> Egress:
    """The run's proxy for ``spec``, started now if it is not yet (blocking; idempotent).

    Raises:
        GaiaError: The proxy image is missing, or the proxy did not come up.
    """
    state = egress_state()
    with state.lock:
        key = _key(spec)
        if key not in state.proxies:
            state.proxies[key] = _start(task_name, spec, key)
        proxy = state.proxies[key]
    if proxy.watch is not None and proxy.watch.lost is not None:
        raise GaiaError(proxy.watch.lost, fix="rerun the errored samples with `inspect eval-retry`")
    return proxy


def _start(task_name: str, spec: EgressSpec, key: str) -> Egress:
    from docker.errors import ImageNotFound

    try:
        client.image_config(PROXY_IMAGE)
    except ImageNotFound as ex:
        raise GaiaError(
            f"-T block_answer_sources, web_record and web_replay need the egress proxy image "
            f"{PROXY_IMAGE}",
            fix="build it with `inspect-gaia image build --egress-proxy --offline` (no registry "
            "needed) or `inspect-gaia image build --egress-proxy`",
        ) from ex
    api = client.api()
    labels = {**run_labels(task_name), EGRESS_LABEL: key[:16]}
    stem = f"gaia-egress-{labels[RUN_LABEL]}-{uuid.uuid4().hex[:6]}"
    created: list[tuple[str, str]] = []
    try:
        network = str(
            api.create_network(
                stem,
                driver="bridge",
                internal=True,
                # no address of the host's on it either: its services are no way out
                options={"com.docker.network.bridge.inhibit_ipv4": "true"},
                labels=labels,
            )["Id"]
        )
        created.append(("network", network))
        outside = str(api.create_network(f"{stem}-out", driver="bridge", labels=labels)["Id"])
        created.append(("network", outside))
        subnet = api.inspect_network(network)["IPAM"]["Config"][0]["Subnet"]
        replayed = spec.replay
        allow, test_gateways = test_networks()
        test_ca = os.environ.get(TEST_CA_ENV)
        deny = host_addresses(outside) + test_gateways
        proxy = str(
            api.create_container(
                PROXY_IMAGE,
                command=_command(subnet, deny, allow, spec.bodies, bool(test_ca))
                if replayed is None
                else _replay_command(),
                # its log is how the run knows it listens (and counts refusals): unbuffered
                environment=["PYTHONUNBUFFERED=1"],
                name=stem,
                labels=labels,
                detach=True,
                host_config=api.create_host_config(
                    # a replay's proxy has no way out at all: the sandboxes' network alone
                    network_mode=outside if replayed is None else network,
                    init=True,
                    mem_limit=MEMORY,
                    pids_limit=1024,
                    sysctls=SOCKET_BUFFERS,
                ),
            )["Id"]
        )
        created.append(("container", proxy))
        if replayed is not None:  # what the host checked of it, never the archive's own bytes
            send_replay(proxy, replayed, REPLAY_DIR)
        # the programs after it: the package's, whatever the archive held
        files = {f"/egress/{p.name}": source(p).encode() for p in PROXY_PROGRAMS}
        files["/egress/rules.json"] = json.dumps({"rules": spec.as_json()["rules"]}).encode()
        if replayed is None:
            files[f"{RECORD_DIR}/run.json"] = manifest(spec)
        if test_ca:
            with open(test_ca, "rb") as pem:
                files[TEST_CA_PATH] = pem.read()
        api.put_archive(proxy, "/", client.tar_of(files))
        if replayed is None:
            api.connect_container_to_network(proxy, network)
        api.start(proxy)
        _wait_ready(proxy)
        address = api.inspect_container(proxy)["NetworkSettings"]["Networks"]
        ip = next(v["IPAddress"] for v in address.values() if v.get("NetworkID") == network)
        ca = archive.get_file(proxy, _PROXY_CA, _PROXY_CA)
        watch = Watch(proxy)
        watch.start()
        kept = stem.replace("gaia-egress-", "gaia-web-") + ".tar" if spec.bodies else None
        return Egress(network, outside, proxy, ip, ca, watch=watch, archive=kept)
    except BaseException:
        for kind, ident in reversed(created):
            try:
                (client.remove_container if kind == "container" else client.remove_network)(ident)
            except Exception:  # the run's cleanup (or the next run's sweep) removes it
                pass
        raise


def _command(
    subnet: str, deny: list[str], allow: list[str], bodies: bool, test_ca: bool = False
) -> list[str]:
    return _mitmdump(
        # the guard decides, then the recorder writes down what it decided (in this order)
        *("-s", "/egress/addon.py", "-s", "/egress/recorder.py"),
        *("--set", "gaia_rules=/egress/rules.json", "--set", f"gaia_clients={subnet}"),
        *("--set", f"gaia_deny={','.join(deny)}", "--set", f"gaia_allow={','.join(allow)}"),
        *("--set", f"gaia_record_dir={RECORD_DIR}"),
        *(body_options() if bodies else []),
        *(("--set", f"ssl_verify_upstream_trusted_ca={TEST_CA_PATH}") if test_ca else ()),
    )


def _replay_command() -> list[str]:
    """A replay's proxy: the recorded web (``replay.py``) in place of the guard, recorded too.

    Within the guard's bounds (``bounds.py``): the same caps per sandbox, the same blame.
    """
    return _mitmdump(
        *("-s", "/egress/bounds.py", "-s", "/egress/replay.py", "-s", "/egress/recorder.py"),
        *("--set", f"gaia_replay={REPLAY_DIR}", "--set", f"gaia_record_dir={RECORD_DIR}"),
    )


def _mitmdump(*scripts: str) -> list[str]:
    return [
        *("python3", "/egress/supervise.py", str(PORT), "--"),
        "mitmdump",
        *("--listen-port", str(PORT)),
        *("--set", "confdir=/egress/conf"),
        # never connect to a server before a request is allowed (a refusal reaches nothing)
        *("--set", "connection_strategy=lazy", "--set", "upstream_cert=false"),
        # no body is held whole (the addon streams the rest), and no WebSocket message either
        *("--set", f"stream_large_bodies={STREAM_ABOVE}", "--set", "websocket=false"),
        # HTTP/1.1 both ways: over HTTP/2 a client's closed window parks a body in the proxy
        # without bound (the addon's docstring says why not HTTP/2 with a cap of ours)
        *("--set", "http2=false"),
        *scripts,
        # its own log is warnings only: the container's log is the run's channel from the proxy
        *("--set", "flow_detail=0", "--set", "termlog_verbosity=warn"),
    ]


def _wait_ready(proxy: str) -> None:
    api = client.api()
    deadline = time.monotonic() + READY_TIMEOUT
    while time.monotonic() < deadline:
        logs = api.logs(proxy).decode("utf-8", errors="replace")
        if _READY in logs:
            return
        if not api.inspect_container(proxy)["State"]["Running"]:
            tail = " / ".join(logs.strip().splitlines()[-3:])
            raise GaiaError(f"the egress proxy stopped at its start: {tail[:400]}")
        time.sleep(0.1)
    raise GaiaError(
        f"the egress proxy did not start within {READY_TIMEOUT:.0f} s",
        fix="check `inspect-gaia doctor` and the Docker Engine's load, then rerun",
    )


def sample_kwargs(kwargs: Mapping[str, Any], egress: Egress) -> dict[str, Any]:
    """A sandbox's container arguments on the internal network, with the proxy in its env."""
    proxy = f"http://{egress.address}:{PORT}"
    environment = list(kwargs.get("environment") or [])
    for name, value in {
        "HTTP_PROXY": proxy,
        "HTTPS_PROXY": proxy,
        "NO_PROXY": _NO_PROXY,
        # the run's CA, for the clients that do not read the system bundle by default
        "SSL_CERT_FILE": BUNDLE,
        "REQUESTS_CA_BUNDLE": BUNDLE,
        "CURL_CA_BUNDLE": BUNDLE,
        "PIP_CERT": BUNDLE,
        "GIT_SSL_CAINFO": BUNDLE,
        "NODE_EXTRA_CA_CERTS": CA_FILE,
    }.items():
        environment += [f"{name}={value}"] + (
            [f"{name.lower()}={value}"] if "PROXY" in name else []
        )
    host = {**kwargs["host_config"], "network_mode": egress.network}
    return {**kwargs, "environment": environment, "host_config": host}


def sample_files(egress: Egress, image: str) -> dict[str, bytes]:
    """The files a sandbox of ``image`` gets before it starts: the CA, and the bundle with it."""
    if image not in egress.bundles:
        egress.bundles[image] = _image_bundle(image).rstrip(b"\n") + b"\n" + egress.ca
    return {CA_FILE: egress.ca, BUNDLE: egress.bundles[image]}


def _image_bundle(image: str) -> bytes:
    """The image's own CA bundle (empty when it has none), read from a container never started."""
    probe = client.create_only(image, {})
    try:
        return archive.get_file(probe, BUNDLE, BUNDLE)
    except OSError:
        return b""
    finally:
        client.remove_container(probe)


def refusals(egress: Egress) -> int:
    """How many requests the proxy refused so far (its log's JSON lines).

    At least: a sandbox's lines stop after ``load.MAX_SAID`` (its refusals are all in its record).
    """
    try:
        logs = client.api().logs(egress.proxy).decode("utf-8", errors="replace")
    except Exception:
        return 0
    return sum('"refused"' in line for line in logs.splitlines() if '"inspect_gaia"' in line)


def summary(egress: Egress) -> list[str]:
    """What the run prints of its proxy at its end: refusals, restarts."""
    lines = []
    refused = refusals(egress)
    if refused:
        lines.append(f"The egress proxy refused {refused} request(s) to answer sources")
    outages = egress.watch.outages if egress.watch is not None else []
    if outages:
        what = "; ".join(outage.describe() for outage in outages)
        lines.append(
            f"The egress proxy was restarted {len(outages)} time(s) ({what}): samples with a "
            "command running then ended as errors — rerun them with `inspect eval-retry`"
        )
    if egress.watch is not None and egress.watch.lost is not None:
        lines.append(f"The run lost its web access: {egress.watch.lost}")
    return lines


def commands(egress: Egress) -> SampleCommands | None:
    """A new sandbox's view of its proxy's outages (``egress_watch``)."""
    return None if egress.watch is None else SampleCommands(egress.watch)


def forget(state: EgressState) -> None:
    """The run is removing its proxies: their ends are no outages."""
    for egress in state.proxies.values():
        if egress.watch is not None:
            egress.watch.close()
    state.proxies.clear()
