from __future__ import annotations

import json
import os
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from inspect_ai.log import read_eval_log
from inspect_ai.util import ComposeConfig

from inspect_gaia import gaia
from inspect_gaia.defaults import SandboxKind
from inspect_gaia.options import DEFAULT_IMAGE, SandboxLimits
from inspect_gaia.sandboxes.spec import (
    CAPABILITIES,
    CAPABILITY_BITS,
    COMPOSE_FILE,
    capability_mask,
    capability_names,
    docker_size,
    gaia_compose,
    gaia_sandbox,
    size_bytes,
)
from support.scripted_model import Entry
from tests.helpers import REPO, Play, eval_gaia, inspect_cli, invoke, run_eval_cli
from tests.scenario import GAIA_TINY, LAGOON
from tests.spare_engine import SpareEngine, engine_env


def test_the_package_reads_the_repository_compose_file() -> None:
    assert COMPOSE_FILE.read_text() == (REPO / "compose.yaml").read_text()


def test_compose_file_has_one_default_service_and_mounts_nothing() -> None:
    raw = yaml.safe_load((REPO / "compose.yaml").read_text())
    assert list(raw["services"]) == ["default"]
    service = raw["services"]["default"]
    assert service["image"] == DEFAULT_IMAGE == "python:3.11"
    assert service["init"] is True
    # Attachments are copied per sample; a volume could expose the dataset (and its answers).
    assert "volumes" not in service and "volumes" not in raw
    assert "env_file" not in service and "environment" not in service


def test_every_capability_is_dropped_but_what_root_needs_to_install_and_own_files() -> None:
    """No NET_RAW (forged ARP between a run's sandboxes), in both files and every provider's copy."""
    service = yaml.safe_load((REPO / "compose.yaml").read_text())["services"]["default"]
    assert service["cap_drop"] == ["ALL"] and tuple(service["cap_add"]) == CAPABILITIES
    assert "NET_RAW" not in CAPABILITIES and "NET_ADMIN" not in CAPABILITIES
    values = yaml.safe_load((REPO / "values.yaml").read_text())["services"]["default"]
    assert values["securityContext"]["capabilities"] == {"drop": ["ALL"], "add": list(CAPABILITIES)}
    for kind in ("docker", "compose"):
        config = gaia_sandbox(kind=kind).config
        assert isinstance(config, ComposeConfig)
        copy = config.services["default"]
        assert (copy.cap_drop, tuple(copy.cap_add or ())) == (["ALL"], CAPABILITIES)
    # Docker's defaults (CapEff 00000000a80425fb) less NET_RAW, MKNOD, SETPCAP, SETFCAP,
    # SYS_CHROOT, NET_BIND_SERVICE and AUDIT_WRITE
    assert capability_mask(CAPABILITIES) == 0xFB
    assert set(capability_names(0xA80425FB)) - set(CAPABILITIES) == {
        "NET_RAW",
        "MKNOD",
        "SETPCAP",
        "SETFCAP",
        "SYS_CHROOT",
        "NET_BIND_SERVICE",
        "AUDIT_WRITE",
    }
    assert capability_names(1 << 63) == ["CAP_63"] and len(set(CAPABILITY_BITS.values())) == 41


def test_overrides_leave_the_rest_as_written() -> None:
    default = gaia_compose()
    custom = gaia_compose(image="local/sandbox:1", network=False)
    assert custom.services["default"].image == "local/sandbox:1"
    assert custom.services["default"].network_mode == "none"
    assert default.services["default"].network_mode is None
    assert custom.services["default"].command == default.services["default"].command
    assert custom.services["default"].init is True


def test_sandbox_spec_is_docker_with_the_compose_config() -> None:
    spec = gaia_sandbox(image="x/y:z")
    assert spec.type == "gaia-docker"
    assert isinstance(spec.config, ComposeConfig)
    assert spec.config.services["default"].image == "x/y:z"
    compose = gaia_sandbox(image="x/y:z", kind="compose")
    assert compose.type == "gaia-compose" and compose.config == spec.config


def test_disk_limit_becomes_storage_opt() -> None:
    service = gaia_compose(limits=SandboxLimits(disk="10g")).services["default"]
    assert service.model_dump(exclude_none=True)["storage_opt"] == {"size": "10g"}
    assert "storage_opt" not in gaia_compose().services["default"].model_dump(exclude_none=True)


@pytest.mark.parametrize(
    ("text", "size"),
    [("512m", 512 * 2**20), ("4g", 4 * 2**30), ("4GB", 4 * 2**30), ("1024", 1024), ("1.5k", 1536)],
)
def test_size_bytes(text: str, size: int) -> None:
    assert size_bytes(text) == size


@pytest.mark.parametrize(
    "text", ["lots", "", "0", "-1g", True, "1e3", "1_000m", "inf", "nan", ".5g", "4p", 2.5]
)
def test_size_bytes_rejects(text: object) -> None:
    """Only what docker-py and docker compose both read (``inf`` raised OverflowError)."""
    assert size_bytes(text) is None


@pytest.mark.parametrize(
    ("size", "text"),
    [(4 * 2**30, "4g"), (1536 * 2**20, "1536m"), (5000 * 2**40, "5120000g"), (1536, "1536")],
)
def test_docker_size_is_the_largest_exact_unit(size: int, text: str) -> None:
    assert docker_size(size) == text and size_bytes(text) == size


def test_default_limits_are_applied() -> None:
    service = gaia_compose().services["default"]
    assert service.mem_limit == "4g" and service.memswap_limit == "4g"
    assert service.pids_limit == 1024
    assert service.cpus == min(2.0, float(os.cpu_count() or 1))
    lifted = gaia_compose(limits=SandboxLimits(cpus=None, memory=None, pids=None)).services[
        "default"
    ]
    assert (lifted.cpus, lifted.mem_limit, lifted.pids_limit) == (None, None, None)


def test_k8s_spec(isolated_cache: Path) -> None:
    spec = gaia_sandbox(
        image="reg.example/gaia:1",
        network=False,
        limits=SandboxLimits(cpus=1.5, memory="2g"),
        kind="k8s",
    )
    assert spec.type == "k8s"
    values_path = Path(str(spec.config))
    assert values_path.is_relative_to(isolated_cache)
    values = yaml.safe_load(values_path.read_text())
    default = values["services"]["default"]
    assert default["image"] == "reg.example/gaia:1"
    assert default["command"] == ["tail", "-f", "/dev/null"]
    assert default["resources"]["limits"] == {"cpu": "1.5", "memory": str(2 * 2**30)}
    assert "allowEntities" not in values and values["networkPolicy"] == {"enabled": True}
    assert "volumes" not in default or not default["volumes"]
    online = yaml.safe_load(Path(str(gaia_sandbox(kind="k8s").config)).read_text())
    assert online["allowEntities"] == ["world"]
    # the k8s provider is registered with inspect, and the task selects it
    from inspect_ai.util._sandbox.registry import registry_find_sandboxenv

    assert registry_find_sandboxenv("k8s") is not None
    task = gaia(dataset_path=str(GAIA_TINY), sandbox="k8s")
    assert task.sandbox is not None and task.sandbox.type == "k8s"


# memory limit, pids limit, CPU quota and period: cgroup v2 files, else cgroup v1 ones
LIMITS_PROBE = """python3 -c '
import os
def read(*paths):
    for path in paths:
        if os.path.exists(path):
            return open(path).read().split()
    return []
g = "/sys/fs/cgroup/"
cpu = read(g + "cpu.max") or read(g + "cpu/cpu.cfs_quota_us") + read(g + "cpu/cpu.cfs_period_us")
print(*read(g + "memory.max", g + "memory/memory.limit_in_bytes"), *read(g + "pids.max", g + "pids/pids.max"), *cpu)
'"""


@pytest.mark.docker
def test_limits_are_visible_inside_the_sandbox(
    sandbox_image: str,
    sandbox_kind: SandboxKind,
    scripted: Play,
    tmp_path: Path,
) -> None:
    scripted([Entry("", [{"bash": LIMITS_PROBE}, {"submit_output": True}])])
    log = eval_gaia(
        tmp_path,
        dataset_path=str(GAIA_TINY),
        image=sandbox_image,
        ids=LAGOON,
        memory="512m",
        pids=256,
        cpus=1,
        sandbox=sandbox_kind,
    )
    assert log.samples is not None and log.samples[0].scores is not None
    memory, pids, quota, period = str(log.samples[0].scores["gaia_scorer"].answer).split()
    assert int(memory) == 512 * 2**20
    assert int(pids) == 256
    assert int(quota) / int(period) == 1.0


# -- -T disk= on an engine that enforces it (a test-only engine on a loop-mounted btrfs) ------------

VISITS = "9410e454-b071-52ff-ac24-dce9845bebd0"
"""gaia-tiny's other level-1 question."""
DISK_MB = 200
DISK = f"{DISK_MB}m"
"""With simple quotas (the test engine's) the size counts only what the sandbox writes."""
FILL = {
    "bash": "dd if=/dev/zero of=/tmp/fill bs=1M count=2048 2>&1 | grep -v -e records -e copied; du -sm /tmp/fill"
}
"""Writes until the disk limit stops it: dd's error says why it stopped, du how far it got."""


def stopped_by_the_limit(answer: str) -> bool:
    """dd stopped on a write error, having written no more than the limit: the limit stopped it.

    The engine's loop file holds 4 GB, so nothing else can stop a write this small. The error is
    kept in the answer (EDQUOT is what btrfs reports), so a failure shows what dd really said.
    """
    *said, usage = answer.strip().splitlines() or [""]
    written = usage.split()[:1]
    return (
        any("error writing" in line for line in said)
        and written != []
        and int(written[0]) <= DISK_MB
    )


@pytest.fixture(scope="module")
def btrfs_engine(sandbox_image: str) -> Iterator[SpareEngine]:
    """A test-only engine whose storage driver enforces ``storage_opt: size`` (btrfs)."""
    engine = SpareEngine(Path(tempfile.mkdtemp(prefix="gaia-btrfs-")), btrfs=True)
    try:
        engine.start()
        engine.load_image(sandbox_image)
        yield engine
    finally:
        engine.remove()


@pytest.mark.docker
def test_doctor_says_a_btrfs_engine_enforces_the_disk_limit_and_what_can_undo_it(
    btrfs_engine: SpareEngine, sandbox_image: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DOCKER_HOST", btrfs_engine.host)
    code, out, err = invoke(
        "doctor", "--image", sandbox_image, "--dataset-path", str(GAIA_TINY), "--disk", DISK,
        "--min-free-gb", "0", "--json",
    )  # fmt: skip
    checks = {c["name"]: c for c in json.loads(out)}
    detail = checks["disk limit"]["detail"]
    assert checks["disk limit"]["ok"] and detail.startswith(f"-T disk={DISK} is enforced"), detail
    assert "btrfs quota rescan" in detail and "docs/sandboxes.md#limits" in detail
    assert btrfs_engine.docker("ps", "-aq").stdout.split() == [], "doctor's probe is removed"


@pytest.mark.docker
def test_a_disk_limit_is_enforced_logged_and_kept_by_eval_retry(
    btrfs_engine: SpareEngine,
    sandbox_image: str,
    sandbox_kind: SandboxKind,
    scripted: Play,
    tmp_path: Path,
) -> None:
    """Issue #17 findings 2 and 3: a run with ``-T disk=`` wrote a log nothing could read."""
    model = scripted(
        [
            Entry("invented lagoon", [{"http_error": 400}]),
            Entry("", [FILL, {"submit_output": True}]),
        ]
    )
    env = engine_env(btrfs_engine)
    args = [f"dataset_path={GAIA_TINY}", f"image={sandbox_image}", "level=1", f"disk={DISK}"]
    run = run_eval_cli([*args, f"sandbox={sandbox_kind}"], tmp_path, env=env)
    output = run.stdout + run.stderr
    assert "Traceback" not in output and "ZIP archive" not in output, output[-3000:]
    (log_file,) = (tmp_path / "logs").glob("*.eval")

    log = read_eval_log(str(log_file))
    assert log.eval.sandbox is not None
    assert log.eval.sandbox.config.services["default"].storage_opt == {"size": DISK}
    assert log.samples is not None and len(log.samples) == 2 and log.status == "error"
    answers = {s.id: s.scores["gaia_scorer"].answer for s in log.samples if s.scores}
    assert stopped_by_the_limit(str(answers[VISITS])), f"the limit stopped the writes: {answers}"
    failed = next(s for s in log.samples if s.id == LAGOON)
    assert failed.error is not None and "400" in failed.error.message
    code, _, err = invoke("report", str(log_file))
    assert code == 0, err

    model.entries = [Entry("", [FILL, {"submit_output": True}])]
    model.calls.clear()
    retry = subprocess.run(
        [inspect_cli(), "eval-retry", str(log_file), "--log-dir", str(tmp_path / "retry")],
        capture_output=True,
        text=True,
        env=env,
    )
    assert retry.returncode == 0, retry.stdout[-3000:] + retry.stderr[-3000:]
    (retried_file,) = (tmp_path / "retry").glob("*.eval")
    retried = read_eval_log(str(retried_file))
    assert retried.status == "success" and retried.samples is not None
    assert len(model.calls) == 2, "only the errored sample ran again (two turns)"
    assert retried.eval.sandbox == log.eval.sandbox
    rerun = next(s for s in retried.samples if s.id == LAGOON)
    assert rerun.scores is not None
    answer = str(rerun.scores["gaia_scorer"].answer)
    assert stopped_by_the_limit(answer), f"retried with the limit: {answer}"
    assert invoke("report", str(log_file), str(retried_file))[0] == 0
    assert btrfs_engine.docker("ps", "-aq").stdout.split() == [], "no sandbox, no probe left"


@pytest.mark.docker
def test_the_test_engine_keeps_the_limit_when_full_qgroups_would_stop_counting(
    btrfs_engine: SpareEngine, sandbox_image: str
) -> None:
    """CI once saw 2048 MB written under a 400 MB limit: the kernel had marked Docker's full
    qgroups inconsistent and stopped counting. A snapshot into a higher-level qgroup its source
    is not in marks full qgroups inconsistent at once (the kernel's own test of that state); on
    the test engine's simple quotas nothing is marked, and a sandbox still stops at its limit.
    """
    container = btrfs_engine.docker(
        "run", "-d", "--storage-opt", f"size={DISK}", sandbox_image, "sleep", "300"
    ).stdout.strip()  # fmt: skip
    data = btrfs_engine.root / "data"
    try:
        for command in (
            ["btrfs", "qgroup", "create", "1/100", str(data)],
            ["btrfs", "subvolume", "create", str(data / "gaia-source")],
            ["btrfs", "subvolume", "snapshot", "-i", "1/100", str(data / "gaia-source"), str(data / "gaia-copy")],
        ):  # fmt: skip
            subprocess.run(command, check=True, capture_output=True)
        subprocess.run(["sync"], check=True)
        filled = btrfs_engine.docker("exec", container, "bash", "-c", FILL["bash"], check=False)
        assert stopped_by_the_limit(filled.stdout + filled.stderr), filled
    finally:
        btrfs_engine.docker("rm", "-f", container, check=False)
    uuid = subprocess.run(
        ["findmnt", "-no", "UUID", str(data)], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert Path(f"/sys/fs/btrfs/{uuid}/qgroups/inconsistent").read_text().strip() == "0"
