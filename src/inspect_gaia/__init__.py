"""inspect_gaia: the GAIA benchmark as an inspect_ai task package.

The public names are imported on first use (PEP 562): ``from inspect_gaia import gaia`` works as
always, but importing the package, which every ``inspect-gaia`` command does, does not import
inspect_ai (about 1.5 s), so ``inspect-gaia --help`` stays fast.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .agents.basic import gaia_agent
    from .errors import GaiaDatasetError, GaiaError, GaiaParameterError
    from .questions.dataset import DEFAULT_INPUT_PROMPT, GaiaMetadata, gaia_dataset
    from .sandboxes.spec import gaia_sandbox
    from .scoring.scorer import gaia_scorer, question_scorer
    from .task import gaia, gaia_level1, gaia_level2, gaia_level3

_HOMES = {
    "DEFAULT_INPUT_PROMPT": "questions.dataset",
    "GaiaDatasetError": "errors",
    "GaiaError": "errors",
    "GaiaMetadata": "questions.dataset",
    "GaiaParameterError": "errors",
    "gaia": "task",
    "gaia_agent": "agents.basic",
    "gaia_dataset": "questions.dataset",
    "gaia_level1": "task",
    "gaia_level2": "task",
    "gaia_level3": "task",
    "gaia_sandbox": "sandboxes.spec",
    "gaia_scorer": "scoring.scorer",
    "question_scorer": "scoring.scorer",
}
"""Each public name and the module that defines it."""

__all__ = [
    "DEFAULT_INPUT_PROMPT",
    "GaiaDatasetError",
    "GaiaError",
    "GaiaMetadata",
    "GaiaParameterError",
    "gaia",
    "gaia_agent",
    "gaia_dataset",
    "gaia_level1",
    "gaia_level2",
    "gaia_level3",
    "gaia_sandbox",
    "gaia_scorer",
    "question_scorer",
]


def __getattr__(name: str) -> Any:
    """Import a public name from its module on first use, then keep it here."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{home}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The public names, importable or not yet imported."""
    return sorted(set(globals()) | set(__all__))
