"""The errors every refusal is made of: one line, the problem and what to do."""

from __future__ import annotations

import pytest

from inspect_gaia.errors import GaiaParameterError, one_of


def test_one_of_returns_the_choice_or_lists_them_all() -> None:
    assert one_of("split", "test", ("validation", "test")) == "test"
    with pytest.raises(GaiaParameterError) as caught:
        one_of("split", "dev", ("validation", "test"))
    assert str(caught.value) == "split must be one of validation, test — got 'dev'"
    with pytest.raises(GaiaParameterError, match="got 1"):
        one_of("hub", 1, ("huggingface",))
