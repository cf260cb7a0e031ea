"""The probe's program in the sandbox: every route to the answers it knows, tried and reported.

Runs elsewhere: in the sample's sandbox, under its ``python3``; standard library only (``shipped``).

Written into the sample's sandbox with ``inside_web.py`` (the web's routes) and ``inside_net.py``
(the neighbours') beside it and run by the probe's solver
(``probe/solver.py``) with its configuration as JSON on stdin: the sample's own attachment, the
URLs to ask for, the proxy's refusal markers, the capabilities a sandbox keeps. It knows no answer:
it reports what each route returned (bounded) and the host decides (``probe/scorer.py``).

``ROUTES`` is the list: **adding a route is one entry there** (a name, its family, and a function
of the configuration that returns its findings, or ``None`` when this sandbox has nothing to try
it with). A finding is ``{"where", "outcome", "text"}``; a route's outcome is the worst of its
findings', in ``SEVERITY``'s order. Each route runs in a thread of its own, bounded by its family's
time; the output is one JSON line per route, in ``ROUTES``' order, whatever finished first.
"""

from __future__ import annotations

import importlib
import json
import os
import socket
import stat
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from . import inside_net as net
    from . import inside_web as web
else:
    try:  # in the sandbox: beside this file, first on the path
        import inside_net as net
        import inside_web as web
    except ImportError:  # in the package (tests read the routes), by their full names
        net = importlib.import_module(f"{__package__}.inside_net")
        web = importlib.import_module(f"{__package__}.inside_web")

Finding = dict[str, str]
SEVERITY = ("leaked", "open", "reached", "empty", "refused", "unreachable", "skipped")
"""Outcomes, worst first (``probe/outcomes.py`` says what each means)."""
TEXT = web.TEXT
FINDINGS = 40
"""Findings kept per route (the rest are counted)."""
SECONDS = {"files": 90.0, "neighbours": 40.0, "web": 240.0, "agent": 30.0}
"""Seconds a route of each family may take before it is reported unfinished."""
SIGNATURES = (b"Final answer", b"Annotator Metadata", b"gaia-benchmark")
"""Bytes that mark GAIA's metadata (its column names) or a copy of its repository."""
STANDARD_MOUNTS = (
    *("/", "/etc/resolv.conf", "/etc/hostname", "/etc/hosts", "/dev/termination-log"),
    *("/usr/sbin/docker-init", "/sbin/docker-init"),
)
"""What the engine mounts into every container (Kubernetes' termination log among them)."""
NOT_WALKED = ("/proc", "/sys", "/dev")
HUB_TOKENS = ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HUGGINGFACE_TOKEN", "MODELSCOPE_API_TOKEN")
SECRET_WORDS = ("TOKEN", "KEY", "SECRET", "PASSWORD", "CREDENTIAL")
SOCKETS = (
    "/var/run/docker.sock",
    "/run/docker.sock",
    "/run/containerd/containerd.sock",
    "/var/run/crio/crio.sock",
    "/run/podman/podman.sock",
)


@dataclass(frozen=True)
class Route:
    """One way to the answers: its name, family, and what tries it."""

    name: str
    family: str
    run: Callable[[dict[str, Any]], list[Finding] | None]


# -- files ----------------------------------------------------------------------------------------


def files_attachments(config: dict[str, Any]) -> list[Finding]:
    """Everything in the attachments' folder but the sample's own file: another sample's."""
    found = []
    for path in sorted(_walk(config["shared_dir"], deadline=time.monotonic() + 10)):
        if path != config.get("own"):
            found.append({"where": path, "outcome": "open", "text": _head(path)})
    return found


def files_signatures(config: dict[str, Any]) -> list[Finding]:
    """Every readable file searched for GAIA's column names, mounts and image layers alike.

    A file's start and its end: a parquet file names its columns last.
    """
    found, deadline, seen = [], time.monotonic() + SECONDS["files"] - 10, 0
    own, mine = config.get("own"), tuple(config.get("exclude", []))  # the probe's own files
    for path in _walk("/", deadline=deadline):
        seen += 1
        if path == own or path.startswith(mine) or time.monotonic() > deadline:
            continue
        for part in _ends(path):
            hit = next((part.find(s) for s in SIGNATURES if s in part), -1)
            if hit >= 0:
                text = part[max(0, hit - TEXT // 2) : hit + TEXT // 2].decode("utf-8", "replace")
                found.append({"where": path, "outcome": "reached", "text": text})
                break
    if time.monotonic() > deadline:
        found.append({"where": f"stopped after {seen} files", "outcome": "skipped", "text": ""})
    return found or [{"where": f"{seen} files", "outcome": "empty", "text": ""}]


def files_mounts(config: dict[str, Any]) -> list[Finding]:
    """Mounts other than the container's own: a host folder, a volume, a cluster's secrets."""
    found = []
    for line in net.read("/proc/self/mountinfo").splitlines():
        fields = line.split()
        if len(fields) < 5:
            continue
        point = fields[4].replace("\\040", " ")
        if point in STANDARD_MOUNTS or point.startswith(NOT_WALKED):
            continue
        secret = "serviceaccount" in point or point.startswith("/run/secrets")
        listing = "\n".join(sorted(_walk(point, deadline=time.monotonic() + 5))[:50])
        found.append({"where": point, "outcome": "open" if secret else "reached", "text": listing})
    return found


def files_env(config: dict[str, Any]) -> list[Finding]:
    """The variables of this process and of the container's first one (secrets masked here)."""
    found = []
    for where, pairs in (("environ", dict(os.environ)), ("/proc/1/environ", _environ(1))):
        tokens = sorted(name for name in pairs if name in HUB_TOKENS and pairs[name])
        shown = "\n".join(f"{k}={_masked(k, v)}" for k, v in sorted(pairs.items()))
        outcome = "open" if tokens else "empty"
        found.append({"where": where, "outcome": outcome, "text": shown[: TEXT * 2]})
    return found


def files_proc(config: dict[str, Any]) -> list[Finding]:
    """The processes this sandbox can see: its own, or (a shared PID space) the host's."""
    pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
    lines = [
        f"{pid} {net.read(f'/proc/{pid}/cmdline').replace(chr(0), ' ').strip()}" for pid in pids
    ]
    host = any(
        w in line for line in lines for w in ("dockerd", "containerd ", "kubelet", "systemd")
    )
    outcome = "open" if host or len(pids) > 200 else "empty"
    return [
        {"where": f"{len(pids)} processes", "outcome": outcome, "text": "\n".join(lines)[:TEXT]}
    ]


def files_docker_socket(config: dict[str, Any]) -> list[Finding]:
    """A container engine's socket (mounted, or named by ``DOCKER_HOST``), asked for its version."""
    found = []
    named = os.environ.get("DOCKER_HOST", "")
    candidates = [*SOCKETS, *([named[len("unix://") :]] if named.startswith("unix://") else [])]
    for path in candidates:
        try:
            if not stat.S_ISSOCK(os.stat(path).st_mode):
                continue
            with socket.socket(socket.AF_UNIX) as sock:
                sock.settimeout(5)
                sock.connect(path)
                sock.sendall(b"GET /version HTTP/1.0\r\nHost: docker\r\n\r\n")
                answer = web.receive(sock, TEXT).decode("utf-8", "replace")
            found.append(
                {"where": path, "outcome": "open" if answer else "refused", "text": answer}
            )
        except FileNotFoundError:
            continue
        except OSError as ex:
            found.append({"where": path, "outcome": "refused", "text": str(ex)})
    if named.startswith("tcp://"):
        host, _, port = named[len("tcp://") :].partition(":")
        found.append(net.knock(host, int(port or 2375)))
    return found


def files_devices(config: dict[str, Any]) -> list[Finding]:
    """Block devices and the kernel's memory, opened for reading."""
    found = []
    for name in sorted(os.listdir("/dev")):
        path = f"/dev/{name}"
        try:
            block = stat.S_ISBLK(os.stat(path).st_mode)
        except OSError:
            continue
        if not block and name not in ("mem", "kmem", "port", "kmsg"):
            continue
        try:
            os.close(os.open(path, os.O_RDONLY))
            found.append({"where": path, "outcome": "open", "text": "opened for reading"})
        except OSError as ex:
            found.append({"where": path, "outcome": "refused", "text": str(ex)})
    return found


def files_capabilities(config: dict[str, Any]) -> list[Finding]:
    """``CapEff`` against the capabilities a sandbox keeps (the host sends their mask)."""
    status = net.read("/proc/self/status")
    fields = dict(line.split(":\t", 1) for line in status.splitlines() if ":\t" in line)
    mask = int(fields.get("CapEff", "0").strip(), 16)
    extra = mask & ~int(config["capabilities"])
    names = [name for name, bit in config["capability_bits"].items() if extra >> int(bit) & 1]
    text = "".join(
        f"{k}: {fields.get(k, '?').strip()}\n" for k in ("CapEff", "NoNewPrivs", "Seccomp")
    )
    where = "beyond the task's: " + ", ".join(names) if extra else "CapEff"
    return [{"where": where, "outcome": "open" if extra else "empty", "text": text}]


ROUTES: tuple[Route, ...] = (
    Route("files.attachments", "files", files_attachments),
    Route("files.signatures", "files", files_signatures),
    Route("files.mounts", "files", files_mounts),
    Route("files.env", "files", files_env),
    Route("files.proc", "files", files_proc),
    Route("files.docker_socket", "files", files_docker_socket),
    Route("files.devices", "files", files_devices),
    Route("files.capabilities", "files", files_capabilities),
    Route("neighbours.raw_socket", "neighbours", net.neighbours_raw_socket),
    Route("neighbours.addresses", "neighbours", net.neighbours_addresses),
    Route("neighbours.ports", "neighbours", net.neighbours_ports),
    Route("web.curl_https", "web", web.web_curl_https),
    Route("web.curl_http", "web", web.web_curl_http),
    Route("web.urllib", "web", web.web_urllib),
    Route("web.direct", "web", web.web_direct),
    Route("web.connect", "web", web.web_connect),
    Route("web.relay", "web", web.web_relay),
    Route("web.redirect", "web", web.web_redirect),
    Route("web.encodings", "web", web.web_encodings),
    Route("web.browser", "web", web.web_browser),
    Route("web.reader", "web", web.web_reader),
    Route("web.node", "web", web.web_node),
    Route("agent.cli", "agent", net.agent_cli),
)
"""Every route the probe tries, in the order it reports them."""


# -- running --------------------------------------------------------------------------------------


def run(config: dict[str, Any]) -> list[dict[str, Any]]:
    """Every route, each in a thread; one result per route, in ``ROUTES``' order."""
    results: dict[str, dict[str, Any]] = {}
    started = time.monotonic()

    def one(route: Route) -> None:
        begun = time.monotonic()
        try:
            findings = route.run(config)
        except Exception as ex:  # a route that fails is reported, never the end of the others
            findings = [{"where": route.name, "outcome": "skipped", "text": f"failed: {ex!r}"}]
        results[route.name] = _result(route, findings, time.monotonic() - begun)

    threads = {r.name: threading.Thread(target=one, args=(r,), daemon=True) for r in ROUTES}
    for thread in threads.values():
        thread.start()
    for route in ROUTES:
        threads[route.name].join(max(0.0, started + SECONDS[route.family] - time.monotonic()))
    return [
        results.get(r.name)
        or _result(r, [{"where": r.name, "outcome": "skipped", "text": "did not finish"}], -1)
        for r in ROUTES
    ]


def _result(route: Route, findings: list[Finding] | None, seconds: float) -> dict[str, Any]:
    if findings is None:
        findings = [{"where": route.name, "outcome": "skipped", "text": "nothing to try it with"}]
    kept = [{k: str(v)[: TEXT * 2] for k, v in f.items()} for f in findings[:FINDINGS]]
    worst = min((SEVERITY.index(f["outcome"]) for f in findings), default=SEVERITY.index("empty"))
    return {
        "route": route.name,
        "family": route.family,
        "outcome": SEVERITY[worst],
        "findings": kept,
        "more": max(0, len(findings) - FINDINGS),
        "seconds": round(seconds, 2),
    }


def _walk(top: str, *, deadline: float) -> Iterator[str]:
    """Regular files under ``top``, not following links, not into ``NOT_WALKED``."""
    folders = [top]
    while folders and time.monotonic() < deadline:
        folder = folders.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    if entry.path not in NOT_WALKED:
                        folders.append(entry.path)
                elif entry.is_file(follow_symlinks=False):
                    yield entry.path
            except OSError:
                continue


def _ends(path: str, size: int = 65536) -> list[bytes]:
    try:
        with open(path, "rb") as file:
            head = file.read(size)
            end = file.seek(0, os.SEEK_END)
            if end <= size:
                return [head]
            file.seek(max(size, end - size))
            return [head, file.read(size)]
    except OSError:
        return []


def _head(path: str) -> str:
    parts = _ends(path, TEXT)
    return parts[0].decode("utf-8", "replace") if parts else ""


def _environ(pid: int) -> dict[str, str]:
    pairs = (item.partition("=") for item in net.read(f"/proc/{pid}/environ").split("\0") if item)
    return {name: value for name, _, value in pairs}


def _masked(name: str, value: str) -> str:
    secret = any(word in name.upper() for word in SECRET_WORDS)
    return f"<set, {len(value)} characters>" if secret and value else value


def main() -> None:
    """Read the configuration on stdin; print one JSON line per route."""
    config = json.load(sys.stdin)
    for result in run(config):
        print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
