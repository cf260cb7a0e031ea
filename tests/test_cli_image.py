"""`inspect-gaia image build`."""

from __future__ import annotations

import pytest
from helpers import invoke


@pytest.mark.docker
def test_image_build_is_idempotent(sandbox_image: str) -> None:
    code, out, err = invoke("image", "build", "--offline", "--tag", sandbox_image)
    assert code == 0 and out.strip() == sandbox_image and "already present" in err


def test_image_build_offline_needs_root_or_debootstrap(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    code, _, err = invoke(
        "image", "build", "--offline", "--tag", "inspect-gaia/test:never", "--force"
    )
    assert code == 1 and "needs root" in err
