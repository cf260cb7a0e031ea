"""inspect_ai entry point: importing this registers the GAIA tasks and the gaia-docker sandbox."""

from .docker_sandbox import GaiaDockerSandbox
from .gaia import gaia, gaia_level1, gaia_level2, gaia_level3

__all__ = ["GaiaDockerSandbox", "gaia", "gaia_level1", "gaia_level2", "gaia_level3"]
