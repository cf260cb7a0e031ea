"""inspect_gaia: the GAIA benchmark as an inspect_ai task package.

The public names are imported on first use (PEP 562): ``from inspect_gaia import gaia`` works as
always, but importing the package, which every ``inspect-gaia`` command does, does not import
inspect_ai (about 1.5 s), so ``inspect-gaia --help`` stays fast.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .agent import gaia_agent
    from .dataset import DEFAULT_INPUT_PROMPT, GaiaMetadata, gaia_dataset
    from .errors import GaiaDatasetError, GaiaError, GaiaParameterError
    from .gaia import gaia, gaia_level1, gaia_level2, gaia_level3
    from .sandbox import gaia_sandbox
    from .scorer import gaia_scorer, question_scorer

_HOMES = {
    "DEFAULT_INPUT_PROMPT": "dataset",
    "GaiaDatasetError": "errors",
    "GaiaError": "errors",
    "GaiaMetadata": "dataset",
    "GaiaParameterError": "errors",
    "gaia": "gaia",
    "gaia_agent": "agent",
    "gaia_dataset": "dataset",
    "gaia_level1": "gaia",
    "gaia_level2": "gaia",
    "gaia_level3": "gaia",
    "gaia_sandbox": "sandbox",
    "gaia_scorer": "scorer",
    "question_scorer": "scorer",
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


class _Package(types.ModuleType):
    """This package, keeping ``inspect_gaia.gaia`` the task function.

    Importing the submodule ``inspect_gaia.gaia`` (inspect's registry does) makes Python set the
    package's ``gaia`` attribute to the module; the eager import this package had ran afterwards
    and set it back to the function. Refusing the module here keeps that meaning with lazy imports
    (Python's documented way to customise a module's attribute setting).
    """

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _HOMES and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
