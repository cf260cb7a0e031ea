"""An image given by digest runs end to end, and every log records which image ran.

No registry is reachable here, so the pinned image is a local one given a registry digest by a push
to a stand-in registry on 127.0.0.1 (``helpers_registry``): the engine then holds it under
``127.0.0.1:<port>/<name>@sha256:…`` exactly as it would hold a pulled one.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from inspect_gaia.defaults import SandboxKind
from inspect_gaia.logs.provenance import GaiaProvenance
from inspect_gaia.sandboxes.docker import engine
from support.scripted_model import Entry
from tests.helpers import Play, eval_gaia
from tests.helpers_registry import pinned_image
from tests.scenario import GAIA_TINY, LAGOON

pytestmark = pytest.mark.docker


@pytest.fixture(scope="module")
def pinned(sandbox_image: str) -> Iterator[str]:
    """The sandbox image as a pinned reference (one push for the module: it takes ~30 s)."""
    with pinned_image(sandbox_image, "gaia-pin") as reference:
        yield reference


def test_an_image_given_by_digest_runs_and_is_recorded(
    pinned: str, sandbox_image: str, sandbox_kind: SandboxKind, scripted: Play, tmp_path: Path
) -> None:
    scripted([Entry("", [{"bash": "echo ran"}, {"submit_output": True}])])
    reference, digest = pinned, pinned.partition("@")[2]
    image_id, recorded_digest = engine.image_identity(reference)
    assert recorded_digest == digest and image_id is not None
    assert engine.image_status(reference) == "present"  # the provider's presence check
    log = eval_gaia(
        tmp_path / "pinned",
        dataset_path=str(GAIA_TINY),
        image=reference,
        ids=LAGOON,
        sandbox=sandbox_kind,
    )
    assert log.status == "success" and log.samples is not None
    (sample,) = log.samples
    assert sample.error is None and sample.scores is not None
    assert sample.scores["gaia_scorer"].answer == "ran"
    record = GaiaProvenance.from_metadata(log.eval.metadata)
    assert record is not None
    assert (record.image, record.image_id, record.image_digest) == (reference, image_id, digest)
    assert record.image_pinned
    # the same content by tag: its own id, and no registry digest (a local build)
    by_tag = eval_gaia(
        tmp_path / "tag", dataset_path=str(GAIA_TINY), image=sandbox_image, ids=LAGOON
    )
    tagged = GaiaProvenance.from_metadata(by_tag.eval.metadata)
    assert tagged is not None and tagged.image_digest is None and tagged.image_id is not None
    assert not tagged.image_pinned
    assert tagged.image_identity != record.image_identity
