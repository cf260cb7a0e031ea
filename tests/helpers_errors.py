"""One error of each of the package's error classes, for the tests that render them all."""

from __future__ import annotations

from inspect_gaia.errors import GaiaDatasetError, GaiaError, GaiaParameterError, GaiaSubmissionError
from inspect_gaia.logs.budget import OverBudget
from inspect_gaia.logs.leaderboard import Problem
from inspect_gaia.logs.provenance import ProvenanceError
from inspect_gaia.logs.read import LogProblem
from inspect_gaia.model_check import GaiaModelError
from inspect_gaia.sandboxes.docker.engine import DockerProblem


def one_of_each(fix: str) -> list[tuple[GaiaError, str]]:
    """An error of every class with ``fix`` (``""``: none), and the problem it states."""
    return [
        (GaiaError("the run cannot start", fix), "the run cannot start"),
        (GaiaParameterError("level must be 1, 2 or 3", fix), "level must be 1, 2 or 3"),
        (GaiaDatasetError("no snapshot at x", fix), "no snapshot at x"),
        (GaiaSubmissionError("no logs", fix), "no logs"),
        (Problem("epochs", "a.eval (2 epochs)", fix), "a.eval (2 epochs)"),
        (ProvenanceError("gaia.split is missing", fix), "gaia.split is missing"),
        (DockerProblem("Docker Engine", "not running", fix), "Docker Engine not running"),
        (LogProblem("logs/a.eval", "no such file", fix), "logs/a.eval: no such file"),
        (GaiaModelError("no model to run", fix), "no model to run"),
        (OverBudget("logs/: 20 GB unpacked", fix), "logs/: 20 GB unpacked"),
    ]
