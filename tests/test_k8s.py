"""The Kubernetes values, checked against inspect-k8s-sandbox 0.14.0's own chart (no cluster here).

Every variant the task writes (a cluster with Cilium or without, network on or off, a disk
limit), merged with an operator's values file as Helm merges it, is validated against the chart's
``values.schema.json`` and against the ``fail`` rules of its templates, read from the template
files themselves so that a chart which adds a rule shows up here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jsonschema
import k8s_sandbox
import pytest
import yaml

from inspect_gaia.errors import GaiaParameterError
from inspect_gaia.options import SandboxLimits
from inspect_gaia.sandboxes.k8s import OPERATOR_VALUES, k8s_image_identity, k8s_values
from inspect_gaia.sandboxes.spec import CAPABILITIES, VALUES_FILE, gaia_sandbox

CHART = Path(k8s_sandbox.__file__).parent / "resources" / "helm" / "agent-env"
DIGEST = "sha256:" + "ab" * 32


def _merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """Helm's merge of a later values file over an earlier one: maps merge, the rest replaces."""
    merged = dict(base)
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _template_refusals(values: Mapping[str, Any]) -> list[str]:
    """What the chart's templates ``fail`` on for ``values`` (merged over the chart's defaults).

    network-policy.yaml: with ``networkPolicy.enabled`` false, any non-empty key of its list, or a
    service's ``networkIsolated``/``networks``; service_account.yaml: ``serviceAccountCreate``
    without ``serviceAccountName``. The key list is read from the template.
    """
    policy = (CHART / "templates" / "network-policy.yaml").read_text()
    listed = re.search(r'range \$key := list ((?:"\w+" ?)+)', policy)
    assert listed is not None, "the chart's network-policy template changed: update this test"
    keys = re.findall(r'"(\w+)"', listed.group(1))
    assert {"allowEntities", "allowDomains", "allowCIDR"} <= set(keys)
    refused = []
    if not values["networkPolicy"]["enabled"]:
        refused += [key for key in keys if values.get(key)]
        for name, service in values["services"].items():
            refused += [
                f"services.{name}.{k}" for k in ("networkIsolated", "networks") if service.get(k)
            ]
    account = (CHART / "templates" / "service_account.yaml").read_text()
    assert "serviceAccountName must be set when serviceAccountCreate is true" in account
    if values.get("serviceAccountCreate") and not values.get("serviceAccountName"):
        refused.append("serviceAccountName")
    return refused


def _installed(task_values: Mapping[str, Any], operator: Mapping[str, Any]) -> dict[str, Any]:
    """The values Helm renders with: the chart's, the task's file, then the operator's file."""
    chart = yaml.safe_load((CHART / "values.yaml").read_text())
    return _merge(_merge(chart, task_values), operator)


def _check(task_values: Mapping[str, Any], operator: Mapping[str, Any]) -> dict[str, Any]:
    from k8s_sandbox._helm import validate_no_null_values

    schema = json.loads((CHART / "values.schema.json").read_text())
    validate_no_null_values(dict(task_values), "the task's values")
    # Helm validates the values it renders with (the chart's own defaults hold required keys)
    installed = _installed(task_values, operator)
    jsonschema.validate(installed, schema)
    assert _template_refusals(installed) == []
    return installed


def test_the_chart_is_the_one_these_rules_were_read_from() -> None:
    chart = yaml.safe_load((CHART / "Chart.yaml").read_text())
    assert chart["version"] == "0.14.0"


WITHOUT_CILIUM = {
    "networkPolicy": {"enabled": False},
    "services": {"default": {"runtimeClassName": "runc"}},
}


@pytest.mark.parametrize("operator", [{}, {"networkPolicy": {"enabled": True}}, WITHOUT_CILIUM])
@pytest.mark.parametrize("network", [True, False])
@pytest.mark.parametrize("disk", [None, 10 * 2**30])
def test_every_variant_is_valid_for_the_chart(
    operator: dict[str, Any], network: bool, disk: int | None
) -> None:
    cilium = operator != WITHOUT_CILIUM
    if not cilium and not network:
        return  # refused: test_network_off_needs_a_network_policy
    values = k8s_values(
        yaml.safe_load(VALUES_FILE.read_text()),
        image=f"reg.example/gaia@{DIGEST}",
        network=network,
        cpus=1.5,
        memory_bytes=2 * 2**30,
        disk_bytes=disk,
        operator=operator,
    )
    installed = _check(values, operator)
    service = installed["services"]["default"]
    assert service["image"] == f"reg.example/gaia@{DIGEST}"
    assert service["command"] == ["tail", "-f", "/dev/null"]
    limits = {"cpu": "1.5", "memory": str(2 * 2**30)} | (
        {} if disk is None else {"ephemeral-storage": str(disk)}
    )
    assert service["resources"] == {"limits": limits, "requests": limits}
    # compose.yaml's capabilities: no NET_RAW, whatever the kind of cluster
    assert service["securityContext"]["capabilities"] == {
        "drop": ["ALL"],
        "add": list(CAPABILITIES),
    }
    assert installed["networkPolicy"] == {"enabled": cilium}
    assert installed["allowEntities"] == (["world"] if cilium and network else [])
    if not cilium:  # the operator's own settings survive the merge
        assert service["runtimeClassName"] == "runc"


def test_a_cilium_policy_and_allow_entities_are_refused_without_cilium() -> None:
    """The rule the task avoids: what an unconditional allowEntities did to 0.14.0's chart."""
    old = {"services": {"default": {"image": "python:3.11"}}, "allowEntities": ["world"]}
    assert _template_refusals(_installed(old, WITHOUT_CILIUM)) == ["allowEntities"]


def test_network_off_needs_a_network_policy() -> None:
    with pytest.raises(GaiaParameterError) as caught:
        k8s_values(
            yaml.safe_load(VALUES_FILE.read_text()),
            image="python:3.11",
            network=False,
            cpus=None,
            memory_bytes=None,
            disk_bytes=None,
            operator=WITHOUT_CILIUM,
        )
    assert "nothing would cut the sandboxes off" in str(caught.value)


def test_an_operator_image_that_would_replace_the_tasks_is_refused() -> None:
    operator = {"services": {"default": {"image": "mirror.example/python:3.11"}}}
    with pytest.raises(GaiaParameterError, match="would replace -T image=python:3.11"):
        k8s_values(
            yaml.safe_load(VALUES_FILE.read_text()),
            image="python:3.11",
            network=True,
            cpus=None,
            memory_bytes=None,
            disk_bytes=None,
            operator=operator,
        )


def test_the_operators_file_is_read_from_its_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, isolated_cache: Path
) -> None:
    operator = tmp_path / "cluster-values.yaml"
    operator.write_text(yaml.safe_dump(WITHOUT_CILIUM))
    monkeypatch.setenv(OPERATOR_VALUES, str(operator))
    spec = gaia_sandbox(
        image="reg.example/gaia:1",
        limits=SandboxLimits(cpus=2, memory="4g", disk="10g"),
        kind="k8s",
    )
    written = yaml.safe_load(Path(str(spec.config)).read_text())
    assert written["networkPolicy"] == {"enabled": False} and "allowEntities" not in written
    assert written["services"]["default"]["resources"]["limits"]["ephemeral-storage"] == str(
        10 * 2**30
    )
    _check(written, WITHOUT_CILIUM)
    operator.write_text("[not, a, mapping]")
    with pytest.raises(GaiaParameterError, match=f"{OPERATOR_VALUES}=.* is not a YAML mapping"):
        gaia_sandbox(kind="k8s")
    monkeypatch.setenv(OPERATOR_VALUES, str(tmp_path / "missing.yaml"))
    with pytest.raises(GaiaParameterError, match="cannot be read"):
        gaia_sandbox(kind="k8s")


def test_the_image_a_cluster_pulls_is_recorded_by_its_pin(caplog: pytest.LogCaptureFixture) -> None:
    assert k8s_image_identity(f"reg.example/gaia@{DIGEST}") == (None, DIGEST)
    assert not caplog.records
    assert k8s_image_identity("reg.example/gaia:1") == (None, None)
    (warning,) = caplog.records
    assert "is not pinned by digest" in warning.getMessage()
