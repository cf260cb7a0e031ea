"""A registry stand-in on 127.0.0.1, so that a local image gets a registry digest without the net.

An image pulled from a registry carries its digest in ``RepoDigests``; one built here has none, and
this machine reaches no registry. ``docker push`` to this stand-in gives a local image the digest a
pull would: the engine computes it from the manifest it uploads. Docker trusts a registry on
127.0.0.0/8 over plain HTTP, so no engine setting changes.

Only what a push uses is answered (the distribution API's version check, blob uploads, manifest
upload, manifest and blob reads). Blob bytes are hashed and dropped, never stored: no test pulls
from here, and an image layer is hundreds of megabytes.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.helpers_stubs import serve_http

_BLOB = re.compile(r"^/v2/(?P<name>.+)/blobs/(?P<digest>sha256:[0-9a-f]{64})$")
_UPLOAD = re.compile(r"^/v2/(?P<name>.+)/blobs/uploads/(?P<id>[0-9a-f-]*)$")
_MANIFEST = re.compile(r"^/v2/(?P<name>.+)/manifests/(?P<reference>[^/]+)$")


class _Counted:
    """A SHA-256 that also counts the bytes it was fed (a push reads back how much arrived)."""

    def __init__(self) -> None:
        self.hash = hashlib.sha256()
        self.size = 0

    def update(self, data: bytes) -> None:
        self.hash.update(data)
        self.size += len(data)

    def hexdigest(self) -> str:
        return self.hash.hexdigest()


@dataclass
class _Store:
    blobs: set[str] = field(default_factory=set)
    manifests: dict[str, tuple[str, bytes]] = field(default_factory=dict)
    uploads: dict[str, _Counted] = field(default_factory=dict)


def _handler(store: _Store) -> type[BaseHTTPRequestHandler]:
    class Registry(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            return

        def _body(self, sink: Any = None) -> bytes:
            """The request body, streamed to ``sink.update`` when given (a layer is large)."""
            kept: list[bytes] = []

            def take(size: int) -> None:
                while size > 0:
                    piece = self.rfile.read(min(size, 1 << 20))
                    if not piece:
                        return
                    size -= len(piece)
                    sink.update(piece) if sink is not None else kept.append(piece)

            if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                while (size := int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)) > 0:
                    take(size)
                    self.rfile.readline()
                self.rfile.readline()
            else:
                take(int(self.headers.get("Content-Length") or 0))
            return b"".join(kept)

        def _reply(
            self, status: int, headers: dict[str, str] | None = None, body: bytes = b""
        ) -> None:
            self.send_response(status)
            self.send_header("Docker-Distribution-API-Version", "registry/2.0")
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def do_GET(self) -> None:
            path = self.path.split("?")[0]
            if path == "/v2/":
                return self._reply(200, {"Content-Type": "application/json"}, b"{}")
            manifest = _MANIFEST.match(path)
            if manifest and manifest["reference"] in store.manifests:
                kind, body = store.manifests[manifest["reference"]]
                digest = "sha256:" + hashlib.sha256(body).hexdigest()
                return self._reply(
                    200, {"Content-Type": kind, "Docker-Content-Digest": digest}, body
                )
            blob = _BLOB.match(path)
            if blob and blob["digest"] in store.blobs:
                return self._reply(200, {"Docker-Content-Digest": blob["digest"]})
            self._reply(404)

        do_HEAD = do_GET

        def do_POST(self) -> None:
            self._body()
            upload = _UPLOAD.match(self.path.split("?")[0])
            if upload is None:
                return self._reply(404)
            upload_id = str(uuid.uuid4())
            store.uploads[upload_id] = _Counted()
            location = f"/v2/{upload['name']}/blobs/uploads/{upload_id}"
            self._reply(
                202, {"Location": location, "Range": "0-0", "Docker-Upload-UUID": upload_id}
            )

        def do_PATCH(self) -> None:
            upload = _UPLOAD.match(self.path.split("?")[0])
            if upload is None or upload["id"] not in store.uploads:
                self._body()
                return self._reply(404)
            hashed = store.uploads[upload["id"]]
            self._body(hashed)
            written = f"0-{max(hashed.size - 1, 0)}"
            self._reply(202, {"Location": self.path.split("?")[0], "Range": written})

        def do_PUT(self) -> None:
            path = self.path.partition("?")[0]
            upload = _UPLOAD.match(path)
            if upload is not None and upload["id"] in store.uploads:
                hashed = store.uploads.pop(upload["id"])
                self._body(hashed)
                digest = "sha256:" + hashed.hexdigest()
                store.blobs.add(digest)
                location = f"/v2/{upload['name']}/blobs/{digest}"
                return self._reply(201, {"Location": location, "Docker-Content-Digest": digest})
            data = self._body()
            manifest = _MANIFEST.match(path)
            if manifest is None:
                return self._reply(404)
            digest = "sha256:" + hashlib.sha256(data).hexdigest()
            kind = self.headers.get("Content-Type", "application/json")
            store.manifests[manifest["reference"]] = (kind, data)
            store.manifests[digest] = (kind, data)
            location = f"/v2/{manifest['name']}/manifests/{digest}"
            self._reply(201, {"Location": location, "Docker-Content-Digest": digest})

    return Registry


@contextmanager
def local_registry() -> Iterator[str]:
    """A registry stand-in on an ephemeral 127.0.0.1 port; yields ``127.0.0.1:<port>``."""
    with serve_http(_handler(_Store())) as url:
        yield url.removeprefix("http://")


@contextmanager
def pinned_image(base: str, name: str) -> Iterator[str]:
    """A new image on ``base`` (a label of its own), pushed to a stand-in registry.

    Yields its reference by digest (``127.0.0.1:<port>/<name>@sha256:…``), present locally with
    that digest in its ``RepoDigests``; the image is removed on exit.
    """
    with local_registry() as registry:
        tag = f"{registry}/{name}:pinned"
        dockerfile = f"FROM {base}\nLABEL org.inspect-gaia.test={name}\n"
        built = subprocess.run(
            ["docker", "build", "-q", "-t", tag, "-"],
            input=dockerfile,
            text=True,
            check=True,
            capture_output=True,
        )
        image_id = built.stdout.strip()
        try:
            pushed = subprocess.run(["docker", "push", "-q", tag], capture_output=True, text=True)
            assert pushed.returncode == 0, pushed.stderr
            found = subprocess.run(
                ["docker", "image", "inspect", tag, "--format", "{{json .RepoDigests}}"],
                check=True,
                capture_output=True,
                text=True,
            )
            (digest,) = re.findall(r"sha256:[0-9a-f]{64}", found.stdout)
            yield f"{registry}/{name}@{digest}"
        finally:
            subprocess.run(["docker", "image", "rm", "-f", image_id], capture_output=True)
