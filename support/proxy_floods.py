"""What a hostile sandbox sends the run's egress proxy, as bash commands a scripted agent runs.

Round 6 of the reliability review, in standard-library Python in the sandbox, one mode a command.

Each prints one JSON line (its last) that the test reads off the tool's output:

* ``alpn``: a tunnel, TLS offering ``h2`` and ``http/1.1``: what the proxy chose; and HTTP/2 with
  prior knowledge (no TLS): the first line of the proxy's answer;
* ``h2-nowindow URL SECONDS``: the same to ``web.example`` (the real stand-in web's), then if
  ``h2`` was chosen an HTTP/2 GET of URL announcing a stream window of 0, read for SECONDS (the
  body piles up in the proxy: H1); over HTTP/1.1, the same GET, not read for SECONDS;
* ``forge``: ``Host`` naming another site than the tunnel, and than an absolute-form URL (M3);
* ``heads N KIB SECONDS``: N connections, each with a head of KIB KiB that never ends, held
  SECONDS (M1); how many the proxy refused at once, and how many it cut meanwhile;
* ``hello N KIB SECONDS``: the same with N tunnels, each sending KIB KiB of a TLS ClientHello that
  announces 16 MiB (mitmproxy held it all, and parsed it anew at every read);
* ``slow N KIB SECONDS``: N requests at once for a page answered after SECONDS, each with a URL of
  KIB KiB (H2's flood of the recorder);
* ``erase N KIB CONNECTIONS``: N requests with URLs of KIB KiB (over the proxy's 32 KiB: blocked),
  on CONNECTIONS keep-alive connections (M4: a record too large to read back).

``ProxyWatch`` follows the run's proxy meanwhile: its memory at its highest, and its log.
"""

from __future__ import annotations

import subprocess
import threading

from support.standins import StandIns, docker

SCRIPT = r"""
import json, os, socket, ssl, struct, sys, threading, time
proxy = os.environ["HTTP_PROXY"].rsplit("/", 1)[-1].split(":")
PROXY = (proxy[0], int(proxy[1]))
mode, args = sys.argv[1], sys.argv[2:]

def connect(timeout=30):
    return socket.create_connection(PROXY, timeout=timeout)

def tunnel(target, timeout=30):
    s = connect(timeout)
    s.sendall(b"CONNECT " + target + b" HTTP/1.1\r\nHost: " + target + b"\r\n\r\n")
    head = b""
    while b"\r\n\r\n" not in head:
        more = s.recv(4096)
        if not more:
            raise OSError("closed")
        head += more
    return s, head.split(b"\r\n")[0].decode()

def answer(s):
    out = b""
    try:
        while True:
            more = s.recv(65536)
            if not more:
                break
            out += more
    except OSError as ex:
        return out.decode(errors="replace") or type(ex).__name__
    return out.decode(errors="replace") or "closed"

def tls(s, host, alpn):
    context = ssl.create_default_context(cafile=os.environ["SSL_CERT_FILE"])
    context.set_alpn_protocols(alpn)
    return context.wrap_socket(s, server_hostname=host)

def h2_frame(kind, flags, stream, payload):
    head = struct.pack(">I", len(payload))[1:] + bytes([kind, flags])
    return head + struct.pack(">I", stream) + payload

def h2_literal(name, value):  # HPACK: literal, no indexing, new name, no Huffman
    def string(b):
        assert len(b) < 127
        return bytes([len(b)]) + b
    return b"\x00" + string(name) + string(value)

result = {}
if mode in ("alpn", "h2-nowindow"):
    s, status = tunnel(b"web.example:443" if mode == "h2-nowindow" else b"weather.example:443")
    t = tls(s, "web.example" if mode == "h2-nowindow" else "weather.example", ["h2", "http/1.1"])
    result["alpn"] = t.selected_alpn_protocol()
    if mode == "h2-nowindow" and result["alpn"] == "h2":
        url = args[0].encode()
        path = url.split(b"/", 3)[3] if url.count(b"/") >= 3 else b""
        t.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
        t.sendall(h2_frame(4, 0, 0, struct.pack(">HI", 4, 0)))  # SETTINGS_INITIAL_WINDOW_SIZE=0
        block = (h2_literal(b":method", b"GET") + h2_literal(b":scheme", b"https")
                 + h2_literal(b":authority", b"web.example") + h2_literal(b":path", b"/" + path))
        t.sendall(h2_frame(1, 0x5, 1, block))  # HEADERS, END_STREAM | END_HEADERS
        t.settimeout(float(args[1]) if len(args) > 1 else 30)
        got = 0
        try:  # read what comes (frames, never a window update), until the proxy goes quiet
            while True:
                more = t.recv(65536)
                if not more:
                    break
                got += len(more)
        except OSError:
            pass
        result["received"] = got
    elif mode == "h2-nowindow":  # HTTP/1.1: the same download, asked for and never read
        url = args[0].encode()
        path = url.split(b"/", 3)[3] if url.count(b"/") >= 3 else b""
        t.sendall(b"GET /" + path + b" HTTP/1.1\r\nHost: web.example\r\n\r\n")
        time.sleep(float(args[1]) if len(args) > 1 else 30)
        result["received"] = len(t.recv(65536))  # one read: the rest waits in TCP's buffers
    if mode == "alpn":  # HTTP/2 with prior knowledge, no TLS: the proxy's HTTP/1 reader reads it
        s = connect()
        s.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + h2_frame(4, 0, 0, b""))
        result["prior knowledge"] = answer(s).split("\r\n")[0]
elif mode == "forge":
    s, status = tunnel(b"weather.example:80")
    s.sendall(b"GET /today.txt HTTP/1.1\r\nHost: en.wikipedia.nx\r\nConnection: close\r\n\r\n")
    result["tunnel"] = answer(s)
    s = connect()
    s.sendall(b"GET http://weather.example/today.txt HTTP/1.1\r\nHost: other.example\r\n"
              b"Connection: close\r\n\r\n")
    result["absolute"] = answer(s)
elif mode in ("heads", "hello"):
    n, kib, hold = int(args[0]), int(args[1]), float(args[2])
    held, refused = [], 0
    for i in range(n):
        try:
            if mode == "heads":
                s = connect()
                s.sendall(b"GET http://weather.example/ HTTP/1.1\r\nX-Pad: " + b"h" * (kib * 1024))
            else:  # a ClientHello announcing 16 MiB, of which kib KiB are sent
                s, status = tunnel(b"weather.example:443")
                body = b"\x01\xff\xff\xff\x03\x03" + b"\x00" * (kib * 1024 - 6)
                for at in range(0, len(body), 16384):  # TLS records of at most 16 KiB
                    piece = body[at:at + 16384]
                    s.sendall(b"\x16\x03\x01" + struct.pack(">H", len(piece)) + piece)
            held.append(s)
        except OSError:
            refused += 1
    time.sleep(hold)
    cut = 0
    for s in held:  # which the proxy closed: a read that ends, or fails
        s.settimeout(0.2)
        try:
            s.recv(65536)
            cut += 1  # an answer (a 431) or the end: the proxy let go of it
        except socket.timeout:
            pass
        except OSError:
            cut += 1
    result = {"sent": len(held), "refused": refused, "cut": cut}
elif mode == "slow":
    n, kib, seconds = int(args[0]), int(args[1]), args[2]
    pad = "s" * (kib * 1024)
    held, refused = [], 0
    for i in range(n):
        try:
            s = connect(timeout=60)
            s.sendall(f"GET http://weather.example/slow/{seconds}?{i}-{pad} HTTP/1.1\r\n"
                      f"Host: weather.example\r\n\r\n".encode())
            held.append(s)
        except OSError:
            refused += 1
    answered = 0
    for s in held:
        try:
            answered += b" 200 " in s.recv(200).split(b"\r\n")[0]
        except OSError:
            pass
    result = {"sent": len(held), "refused": refused, "answered": answered}
elif mode == "erase":
    n, kib, connections = int(args[0]), int(args[1]), int(args[2])
    pad = "e" * (kib * 1024)
    statuses = []
    def worker(k):
        s = connect(timeout=120)
        f = s.makefile("rb")
        for i in range(n // connections):
            s.sendall(f"GET http://weather.example/x{k}-{i}?{pad} HTTP/1.1\r\n"
                      f"Host: weather.example\r\n\r\n".encode())
            statuses.append(f.readline().split(b" ")[1].decode())
            length = 0
            while True:
                line = f.readline()
                if line in (b"\r\n", b""):
                    break
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            f.read(length)
    workers = [threading.Thread(target=worker, args=(k,)) for k in range(connections)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    result = {"statuses": {s: statuses.count(s) for s in set(statuses)}}
print(json.dumps(result))
"""


def flood(mode: str, *args: object) -> str:
    """The bash command that runs ``mode`` with ``args`` (see the module docstring)."""
    words = " ".join(str(arg) for arg in args)
    return f"python3 - {mode} {words} <<'PY'\n{SCRIPT}\nPY"


class ProxyWatch:
    """The run's proxy (attached to the stand-ins), its memory's peak and its log, until stopped.

    Read every half second: the container's cgroup peak (v2's ``memory.peak``, v1's
    ``memory.max_usage_in_bytes``) and its whole log (the supervisor's ``up`` and ``down`` lines).
    """

    def __init__(self, internet: StandIns) -> None:
        """Watch the proxies attached to ``internet`` (once started: ``with``)."""
        self.internet = internet
        self.peaks = [0]
        self.log = ""
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._watch, daemon=True)

    def _watch(self) -> None:
        read = "cat /sys/fs/cgroup/memory.peak /sys/fs/cgroup/memory/memory.max_usage_in_bytes"
        while not self.stop.wait(0.5):
            for proxy in self.internet.attached:  # cgroup v2, or v1
                try:
                    peak = docker("exec", proxy, "sh", "-c", f"{read} 2>/dev/null || true")
                    self.peaks.append(int(peak.split()[0]))
                except (subprocess.CalledProcessError, ValueError, IndexError):  # not up, gone
                    pass
                try:
                    self.log = docker("logs", proxy)
                except subprocess.CalledProcessError:
                    pass

    def __enter__(self) -> ProxyWatch:
        """Start watching."""
        self.thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        """Stop watching (the last readings stay)."""
        self.stop.set()
        self.thread.join()
