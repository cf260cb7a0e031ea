"""The GAIA sandbox on Kubernetes: values for inspect-k8s-sandbox's agent-env chart, on any cluster.

``values.yaml`` (the repository root's, shipped in the package) is read as written; the task's
image, limits and network setting are applied to a copy written under the cache directory (the
provider takes a path). The chart (0.14.0) knows two kinds of cluster:

* **With Cilium** (the chart's default, ``networkPolicy.enabled: true``): the chart's
  CiliumNetworkPolicy lets a sandbox reach only its own pod and DNS, so ``-T network=true`` adds
  ``allowEntities: [world]`` and ``false`` adds nothing.
* **Without Cilium** (``networkPolicy.enabled: false``): no policy is rendered, and the chart
  refuses (``fail``) any ``allowDomains``, ``allowDomainsPorts``, ``allowEntities``,
  ``allowCIDR`` or ``networks`` it could not enforce. The copy then sets none of them; egress is
  what the cluster allows, so ``-T network=false``, which nothing would enforce, is refused.

Which kind a cluster is, the operator says once for every task, in the values file the chart
reads last (``INSPECT_SANDBOX_VALUES``; its values win over a task's). The task reads that file
too: ``networkPolicy.enabled: false`` there selects the second kind, and an image set there, which
would replace ``-T image=`` without a word, is refused. Without the variable, the chart's default
(Cilium) holds.

Limits: ``-T cpus`` and ``-T memory`` are the container's requests and limits (equal, as the
chart's own default, for the Guaranteed QoS class), ``-T disk`` its ``ephemeral-storage`` (the
kubelet evicts a pod that writes past it; Docker's ``storage_opt`` has no counterpart here);
``-T pids`` has none (a node-wide kubelet setting) and is not applied.

The cluster pulls the image, so its id is never known here: a reference pinned by digest is the
one record of what ran, and a run of one that is not is warned about.
"""

from __future__ import annotations

import copy
import hashlib
import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from ..defaults import WRITTEN_VALUES
from ..errors import GaiaParameterError
from ..imageref import pinned_digest

logger = logging.getLogger(__name__)

OPERATOR_VALUES = "INSPECT_SANDBOX_VALUES"
"""inspect-k8s-sandbox's variable: the operator's values file, passed to Helm after the task's."""
_REFUSED_WITHOUT_POLICY = ("allowDomains", "allowDomainsPorts", "allowEntities", "allowCIDR")


def operator_values() -> dict[str, Any]:
    """The operator's values file (``INSPECT_SANDBOX_VALUES``), or ``{}`` when none is set.

    Raises:
        GaiaParameterError: The variable names no readable YAML mapping (the chart would fail
            on it at every sample's install).
    """
    path = os.environ.get(OPERATOR_VALUES)
    if not path:
        return {}
    try:
        values = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as ex:
        raise GaiaParameterError(
            f"{OPERATOR_VALUES}={path} cannot be read ({type(ex).__name__})",
            fix="point it at the cluster's values file, or unset it",
        ) from ex
    if values is None:
        return {}
    if not isinstance(values, dict):
        raise GaiaParameterError(
            f"{OPERATOR_VALUES}={path} is not a YAML mapping of chart values",
            fix="fix the file, or unset it",
        )
    return values


def network_policy(operator: Mapping[str, Any]) -> bool:
    """Whether the chart renders its Cilium network policy (``networkPolicy.enabled``)."""
    policy = operator.get("networkPolicy")
    return not (isinstance(policy, Mapping) and policy.get("enabled") is False)


def k8s_values(
    template: Mapping[str, Any],
    *,
    image: str,
    network: bool,
    cpus: float | None,
    memory_bytes: int | None,
    disk_bytes: int | None,
    operator: Mapping[str, Any],
) -> dict[str, Any]:
    """``template`` (``values.yaml``) with the task's settings, for the cluster ``operator`` says.

    Raises:
        GaiaParameterError: The operator's values would replace the image, or the cluster has no
            network policy and ``network`` is false.
    """
    policy = network_policy(operator)
    theirs = ((operator.get("services") or {}).get("default") or {}).get("image")
    if theirs is not None and theirs != image:
        raise GaiaParameterError(
            f"{OPERATOR_VALUES} sets services.default.image to {theirs}, which would replace "
            f"-T image={image} in every sandbox",
            fix=f"remove it from that file, or pass -T image={theirs}",
        )
    if not policy and not network:
        raise GaiaParameterError(
            f"-T network=false on a cluster without network policies ({OPERATOR_VALUES} sets "
            "networkPolicy.enabled: false): nothing would cut the sandboxes off",
            fix="run with network=true, or on a cluster with Cilium",
        )
    values: dict[str, Any] = copy.deepcopy(dict(template))
    service = values["services"]["default"]
    service["image"] = image
    limits: dict[str, str] = {}
    if cpus is not None:
        limits["cpu"] = f"{float(cpus):g}"
    if memory_bytes is not None:
        limits["memory"] = str(memory_bytes)
    if disk_bytes is not None:
        limits["ephemeral-storage"] = str(disk_bytes)
    service["resources"] = {"limits": limits, "requests": dict(limits)}
    for key in _REFUSED_WITHOUT_POLICY:
        values.pop(key, None)
    values["networkPolicy"] = {"enabled": policy}
    if policy and network:
        values["allowEntities"] = ["world"]
    return values


def write_values(values: Mapping[str, Any], directory: Path) -> Path:
    """Write ``values`` under ``directory``, named by their hash; returns the file's path."""
    text = yaml.safe_dump(dict(values), sort_keys=False)
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    path = directory / f"values-{digest}.yaml"
    assert WRITTEN_VALUES.fullmatch(path.name)
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.is_file():
        path.write_text(text)
    return path


def k8s_image_identity(image: str) -> tuple[None, str | None]:
    """What a Kubernetes run can record of its image: the digest it is pinned by, if any.

    The cluster pulls the image, so no local id is known; a reference by tag is warned about,
    since the nodes may pull another image under it than the last run did.
    """
    digest = pinned_digest(image)
    if digest is None:
        logger.warning(
            f"-T image={image} is not pinned by digest: the cluster's nodes pull whatever the "
            "tag names when they start a sandbox, and the log cannot record which image that "
            "was — pass -T image=<name>@sha256:<digest> to record it"
        )
    return None, digest
