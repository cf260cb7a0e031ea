"""The ``_docker`` package's own page: what each optimisation falls back to, and the plain switch.

That its map names every module is held for every folder (``test_architecture``).
"""

from __future__ import annotations

import pytest

from inspect_gaia.sandboxes import docker as _docker
from inspect_gaia.sandboxes.docker import PLAIN_ENV, plain_requested


def test_the_map_says_what_each_optimisation_falls_back_to() -> None:
    doc = " ".join((_docker.__doc__ or "").split())
    for optimisation in ("``channel``", "``spares``"):
        line = next(part for part in doc.split("* ") if part.startswith(optimisation))
        assert "falls back to" in line, optimisation
    assert f"{PLAIN_ENV}=1" in doc


@pytest.mark.parametrize(
    ("value", "plain"),
    [(None, False), ("", False), ("0", False), ("false", False), ("1", True), ("yes", True)],
)
def test_the_plain_switch_is_on_for_any_value_but_off(
    value: str | None, plain: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if value is None:
        monkeypatch.delenv(PLAIN_ENV, raising=False)
    else:
        monkeypatch.setenv(PLAIN_ENV, value)
    assert plain_requested() is plain
