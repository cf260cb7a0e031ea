"""The response bodies the egress proxy's recorder hashes, and keeps (``-T web_record=bodies``).

Runs elsewhere: in the proxy's container, beside the recorder; standard library only
(``shipped``).

``BodyHash`` takes a body's size and SHA-256 chunk by chunk as it streams past, never holding it.
With bodies kept, it also writes each chunk into a ``BodyFile``: a part file in the run's
``bodies/`` folder, filed under the body's hash at its end (one file per distinct body). Three
caps, each a ``gaia_*_cap`` option of the recorder: a body over ``per_body`` bytes, one that would
take its sample's kept bodies over ``per_sample`` (its share of the run's: one sample cannot fill
the run's cap for every later sample), or the run's over ``per_run``, is not kept (its part file
goes); its size and hash are recorded all the same.
"""

from __future__ import annotations

import hashlib
import os
import uuid
from typing import Any

KEPT = "kept"


class Bodies:
    """Where the run's response bodies are kept: by their SHA-256, within three caps."""

    def __init__(self, directory: str, per_body: int, per_run: int, per_sample: int) -> None:
        """Keep bodies in ``directory`` (made now): each up to ``per_body``, all ``per_run``."""
        self.directory = directory
        self.per_body = per_body
        self.per_run = per_run
        self.per_sample = per_sample
        self.kept = 0
        self.by_sample: dict[str, int] = {}
        """Bytes kept of each sandbox's bodies (a body another sandbox kept first is not its)."""
        self.run_full = False
        self.said: set[str] = set()
        """The run's cap, and the samples over their share, said once each (by the recorder)."""
        os.makedirs(directory, exist_ok=True)

    def open(self, sample: str) -> BodyFile:
        """A new body of ``sample``'s (its sandbox's record name), written as it streams."""
        return BodyFile(self, sample)


class BodyFile:
    """One body on its way to ``bodies/<sha256>``: a part file until its hash is known."""

    def __init__(self, bodies: Bodies, sample: str) -> None:
        """Open the part file."""
        self.bodies = bodies
        self.sample = sample
        self.path = os.path.join(bodies.directory, f".part-{uuid.uuid4().hex}")
        self.out: Any = open(self.path, "wb")  # closed by close or drop
        self.size = 0
        self.written = 0
        self.over: str | None = None

    def write(self, piece: bytes) -> None:
        """Append ``piece``, unless a cap is reached (then the part file goes)."""
        if self.out is None:
            return
        bodies = self.bodies
        self.size += len(piece)
        if self.size > bodies.per_body:
            self.drop(f"over the per-body cap ({bodies.per_body} bytes)")
        elif bodies.run_full or bodies.kept + len(piece) > bodies.per_run:
            bodies.run_full = True
            self.drop(f"over the run's cap ({bodies.per_run} bytes)")
        elif bodies.by_sample.get(self.sample, 0) + len(piece) > bodies.per_sample:
            self.drop(f"over the sample's share of the run's cap ({bodies.per_sample} bytes)")
        else:
            self._count(len(piece))
            self.out.write(piece)

    def _count(self, size: int) -> None:
        self.written += size
        self.bodies.kept += size
        self.bodies.by_sample[self.sample] = self.bodies.by_sample.get(self.sample, 0) + size

    def drop(self, why: str) -> None:
        """Keep nothing of this body (a cap, or a failed exchange)."""
        if self.out is not None:
            self.out.close()
            self.out = None
            self._count(-self.written)
            os.unlink(self.path)
        self.over = self.over or why

    def close(self, sha256: str) -> str:
        """File the body under its hash (once per distinct body); what became of it."""
        if self.out is None:
            return self.over or "not kept"
        self.out.close()
        self.out = None
        final = os.path.join(self.bodies.directory, sha256)
        if os.path.exists(final):  # the same body again: keep one
            self._count(-self.written)
            os.unlink(self.path)
        else:
            os.replace(self.path, final)
        return KEPT


class BodyHash:
    """The size and SHA-256 of a body, taken chunk by chunk as it streams past."""

    def __init__(self, then: Any = True, keep: BodyFile | None = None) -> None:
        """Count (and keep, into ``keep``) what ``then`` streams (``True``: the body itself)."""
        self.digest = hashlib.sha256()
        self.size = 0
        self.then = then
        self.keep = keep

    def __call__(self, chunk: bytes) -> Any:
        """Count ``chunk`` and pass it on (through the previous callable, if any)."""
        out = self.then(chunk) if callable(self.then) else chunk
        for piece in [out] if isinstance(out, bytes) else list(out):
            self.digest.update(piece)
            self.size += len(piece)
            if self.keep is not None:
                self.keep.write(piece)
        return out

    def kept(self) -> str | None:
        """What became of the body (``None``: bodies are not kept)."""
        if self.keep is None:
            return None
        return self.keep.close(self.digest.hexdigest())
