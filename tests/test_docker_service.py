"""compose.yaml's service as Docker API arguments, and the refusals (pure: no engine)."""

from __future__ import annotations

from pathlib import Path

import pytest
from inspect_ai.util import ComposeConfig, ComposeService

from inspect_gaia import GaiaError
from inspect_gaia.options import SandboxLimits
from inspect_gaia.sandboxes.docker.service import (
    SUPPORTED_FIELDS,
    create_kwargs,
    network_wanted,
    service_config,
)
from inspect_gaia.sandboxes.spec import COMPOSE_FILE, gaia_compose


def _config(**fields: object) -> ComposeConfig:
    return ComposeConfig(services={"default": ComposeService.model_validate(fields)})


def test_the_gaia_compose_file_translates() -> None:
    service = service_config(gaia_compose(image="x/y:1", limits=SandboxLimits(disk="5g")))
    kwargs = create_kwargs(service, network="gaia-run-net")
    assert kwargs["image"] == "x/y:1"
    assert kwargs["command"] == ["tail", "-f", "/dev/null"]
    host = kwargs["host_config"]
    assert host["init"] is True and host["network_mode"] == "gaia-run-net"
    assert host["mem_limit"] == "4g" and host["memswap_limit"] == "4g"
    assert host["pids_limit"] == 1024 and isinstance(host["nano_cpus"], int)
    assert host["storage_opt"] == {"size": "5g"}


def test_a_file_path_is_read_too() -> None:
    assert service_config(str(COMPOSE_FILE))["image"] == "python:3.11"


def test_every_field_goes_where_docker_wants_it() -> None:
    service = service_config(
        _config(
            image="i",
            entrypoint=["/bin/sh"],
            environment={"A": "1", "B": None},
            user="nobody",
            hostname="box",
            working_dir="/work",
            read_only=True,
            cap_add=["NET_ADMIN"],
            cap_drop=["ALL"],
            security_opt=["no-new-privileges"],
            shm_size="64m",
            cpus=1.5,
            pids_limit="64",
        )
    )
    kwargs = create_kwargs(service, network=None)
    assert kwargs["environment"] == ["A=1", "B"]
    assert (kwargs["user"], kwargs["hostname"], kwargs["working_dir"]) == ("nobody", "box", "/work")
    host = kwargs["host_config"]
    assert host["nano_cpus"] == 1_500_000_000 and host["pids_limit"] == 64
    assert host["cap_add"] == ["NET_ADMIN"] and host["cap_drop"] == ["ALL"]
    assert host["read_only"] is True and host["shm_size"] == "64m"
    assert "network_mode" not in host  # no network given, none asked for: Docker's default
    assert network_wanted(service)


def test_network_mode_none_wins_over_the_run_network() -> None:
    service = service_config(gaia_compose(network=False))
    assert not network_wanted(service)
    assert create_kwargs(service, network="gaia-run-net")["host_config"]["network_mode"] == "none"


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (None, "the gaia-docker sandbox needs a compose config"),
        (
            ComposeConfig(
                services={"default": ComposeService(image="a"), "db": ComposeService(image="b")}
            ),
            "runs one service named `default` — this compose file has db, default",
        ),
        (_config(image="a", volumes=["/data:/data"]), "field(s) volumes are not applied"),
        (_config(image="a", privileged=True, ports=["80"]), "field(s) ports, privileged are not"),
        (_config(command=["true"]), "names no image"),
        (_config(image="a", network_mode="host"), "network_mode 'host' is not applied"),
    ],
)
def test_refusals_name_the_way_out(config: ComposeConfig | None, message: str) -> None:
    with pytest.raises(GaiaError) as caught:
        service_config(config)
    assert message in str(caught.value)


def test_refusals_point_at_the_compose_sandbox() -> None:
    with pytest.raises(GaiaError, match="use `-T sandbox=compose`"):
        service_config(_config(image="a", volumes=["/x:/x"]))


def test_the_shipped_compose_file_uses_only_supported_fields(tmp_path: Path) -> None:
    service = gaia_compose().services["default"].model_dump(exclude_none=True, by_alias=True)
    assert set(service) <= SUPPORTED_FIELDS
