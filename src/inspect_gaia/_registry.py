"""inspect_ai entry point: importing it registers the tasks, the probe, the judge, the sandboxes."""

from .probe.task import gaia_probe
from .sandboxes.docker.gaia_compose import GaiaComposeSandbox
from .sandboxes.docker.gaia_docker import GaiaDockerSandbox
from .scoring.judge_scorer import gaia_judge
from .task import gaia, gaia_level1, gaia_level2, gaia_level3

__all__ = [
    "GaiaComposeSandbox",
    "GaiaDockerSandbox",
    "gaia",
    "gaia_judge",
    "gaia_level1",
    "gaia_level2",
    "gaia_level3",
    "gaia_probe",
]
