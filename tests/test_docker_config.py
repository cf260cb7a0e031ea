"""Every sandbox setting survives a log round trip, for both Docker providers (no engine).

Issue #17 finding 2: ``-T disk=`` put ``storage_opt`` into inspect's ``ComposeService`` without
validation; the log was written, then refused when read (``Unknown field: 'storage_opt'``), so
``inspect view``, ``eval-retry`` and ``report`` all failed on it. Finding 3: ``gaia-compose`` had no
``config_deserialize`` at all. (A run with ``disk=`` on an engine that enforces it, read back and
retried, is in ``test_sandbox.py``.)
"""

from __future__ import annotations

from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log
from inspect_ai.util import ComposeConfig, SandboxEnvironmentSpec
from pydantic import ValidationError

from inspect_gaia.defaults import SandboxKind
from inspect_gaia.options import SandboxLimits
from inspect_gaia.sandboxes.docker.config import GaiaComposeConfig, gaia_config
from inspect_gaia.sandboxes.docker.service import create_kwargs, service_config
from inspect_gaia.sandboxes.spec import COMPOSE_FILE, gaia_sandbox
from tests.helpers import invoke, write_log

EVERY_SETTING = SandboxLimits(cpus=1, memory="512m", pids=64, disk="10g")


def _sample() -> dict[str, object]:
    return {"id": "q1", "level": 1, "target": "4", "answer": "4", "value": "C"}


@pytest.mark.parametrize("kind", ["docker", "compose"])
@pytest.mark.parametrize("header_only", [False, True])
def test_every_sandbox_setting_survives_a_log_round_trip(
    kind: SandboxKind, header_only: bool, tmp_path: Path
) -> None:
    spec = gaia_sandbox(image="x/y:1", network=False, limits=EVERY_SETTING, kind=kind)
    log = write_log(tmp_path / "disk.eval", [_sample()], sandbox=spec)

    read = read_eval_log(str(log), header_only=header_only).eval.sandbox
    assert read == spec
    assert isinstance(read.config, GaiaComposeConfig)
    service = read.config.services["default"]
    assert service.storage_opt == {"size": "10g"}
    assert (service.image, service.network_mode, service.mem_limit) == ("x/y:1", "none", "512m")
    assert (service.memswap_limit, service.pids_limit, service.cpus) == ("512m", 64, 1.0)
    # what eval-retry hands the provider again: the same container arguments
    host = create_kwargs(service_config(read.config), network=None)["host_config"]
    assert host["storage_opt"] == {"size": "10g"} and host["mem_limit"] == "512m"

    code, out, err = invoke("report", str(log))
    assert code == 0 and "q1" not in err, err


def test_a_log_without_disk_reads_back_as_before(tmp_path: Path) -> None:
    spec = gaia_sandbox(image="x/y:1")
    read = read_eval_log(str(write_log(tmp_path / "a.eval", [_sample()], sandbox=spec)))
    assert read.eval.sandbox == spec
    assert read.eval.sandbox is not None and isinstance(read.eval.sandbox.config, ComposeConfig)


@pytest.mark.parametrize("kind", ["gaia-docker", "gaia-compose"])
def test_a_log_written_before_the_fix_reads_back(kind: str, tmp_path: Path) -> None:
    """Logs written with ``storage_opt`` slipped in (as inspect_gaia did) become readable."""
    from inspect_ai.util import parse_compose_yaml

    config = parse_compose_yaml(str(COMPOSE_FILE), multiple_services=False)
    service = config.services["default"].model_copy(update={"storage_opt": {"size": "10g"}})
    spec = SandboxEnvironmentSpec(
        kind, config.model_copy(update={"services": {"default": service}})
    )
    read = read_eval_log(str(write_log(tmp_path / "old.eval", [_sample()], sandbox=spec)))
    assert read.eval.sandbox is not None and read.eval.sandbox.type == kind
    assert read.eval.sandbox.config.services["default"].storage_opt == {"size": "10g"}


def test_settings_are_validated_when_set() -> None:
    config = parse_default()
    assert gaia_config(config, "default", cpus=None).services["default"].cpus is None
    with pytest.raises(ValidationError):
        gaia_config(config, "default", storage_opt="10g")
    with pytest.raises(ValidationError, match="Unknown field: 'volumes_from'"):
        gaia_config(config, "default", volumes_from=["other"])


def parse_default() -> ComposeConfig:
    from inspect_ai.util import parse_compose_yaml

    return parse_compose_yaml(str(COMPOSE_FILE), multiple_services=False)
