"""A second, test-only Docker Engine, for tests that stop an engine mid-run.

The shared engine is never stopped or restarted by a test: this one has its own socket, data root,
exec root, pid file, address pool and default bridge (``gaiaspare<N>``, made here; N the
pytest-xdist worker), no iptables
rules and no say over IP forwarding, and is removed by the test that started it. It gets the
sandbox image by ``docker save | docker load`` from the shared engine (no registry needed).

Two traps, both seen here, both deleting the host's ``docker0`` interface, which belongs to the
shared engine (whose containers then cannot start): a second dockerd started with ``--bridge none``,
and one started a second time on the same data root. So this engine has a bridge of its own and is
started once; a test that needs an engine again uses the shared one or a fresh ``SpareEngine``.

``SpareEngine(root, btrfs=True)`` keeps its data root on a loop-mounted btrfs file system and uses
Docker's btrfs storage driver, which enforces a per-container size (``storage_opt: size``, so
``-T disk=``) where the shared engine (overlay2 over ext4) cannot. (overlay2 over xfs with
``pquota`` would be the other way, but this kernel has no XFS quota support.)

That file system runs btrfs *simple* quotas, enabled before dockerd starts (Docker then keeps them).
Under full qgroups, which Docker enables by itself, removing a container races the kernel's
cleaner: the kernel logs "qgroup marked inconsistent, to be deleted qgroup 0/N has non-zero
numbers" and stops counting until a rescan, so a later sandbox writes past its size (seen in CI:
2048 MB written under a 400 MB limit). Simple quotas are never marked inconsistent, and count
only what a container writes (not its image).
"""

from __future__ import annotations

import fcntl
import os
import shutil
import signal
import struct
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

_WORKER = int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw") or 0) % 8
"""Which pytest-xdist worker this is: two workers' spare engines have their own bridges and pools."""
BRIDGE = f"gaiaspare{_WORKER}"
BRIDGE_ADDRESS = f"10.214.{_WORKER}.1/24"
ADDRESS_POOL = f"base=10.{205 + _WORKER}.0.0/16,size=24"
QUOTA_CTL = 0xC0109428
"""BTRFS_IOC_QUOTA_CTL: _IOWR(0x94, 40, struct btrfs_ioctl_quota_ctl_args), 16 bytes."""
ENABLE_SIMPLE_QUOTA = 4
"""BTRFS_QUOTA_CTL_ENABLE_SIMPLE_QUOTA (kernel 6.7 and later; btrfs-progs here predates it)."""


@dataclass
class SpareEngine:
    """A dockerd of the test's own; ``host`` is its DOCKER_HOST."""

    root: Path
    btrfs: bool = False
    """Data root on a loop-mounted btrfs image, with the btrfs storage driver."""
    btrfs_size: str = "4G"
    process: subprocess.Popen[bytes] | None = None

    @property
    def host(self) -> str:
        return f"unix://{self.root / 'sock'}"

    def docker(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        """Run the docker CLI against this engine."""
        return subprocess.run(
            ["docker", "-H", self.host, *args], capture_output=True, text=True, check=check
        )

    def answers(self) -> bool:
        return self.docker("info", check=False).returncode == 0

    def start(self, timeout: float = 60) -> None:
        """Start dockerd and wait until it answers (once: see the module docstring)."""
        assert not (self.root / "data").exists(), "a spare engine is never restarted"
        self.root.mkdir(parents=True, exist_ok=True)
        if not Path(f"/sys/class/net/{BRIDGE}").exists():
            for command in (
                ["ip", "link", "add", BRIDGE, "type", "bridge"],
                ["ip", "addr", "add", BRIDGE_ADDRESS, "dev", BRIDGE],
                ["ip", "link", "set", BRIDGE, "up"],
            ):
                subprocess.run(command, check=True, capture_output=True)
        storage: list[str] = []
        if self.btrfs:
            self._mount_btrfs()
            storage = ["--storage-driver", "btrfs"]
        log = (self.root / "dockerd.log").open("ab")
        self.process = subprocess.Popen(
            [
                "dockerd",
                "--data-root", str(self.root / "data"),
                "--exec-root", str(self.root / "exec"),
                "--pidfile", str(self.root / "dockerd.pid"),
                "-H", self.host,
                "--bridge", BRIDGE,
                "--iptables=false",
                "--ip-forward=false",
                "--ip-masq=false",
                "--shutdown-timeout", "1",
                "--default-address-pool", ADDRESS_POOL,
                *storage,
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )  # fmt: skip
        deadline = time.monotonic() + timeout
        while not self.answers():
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise AssertionError(
                    "the test engine did not start: "
                    + (self.root / "dockerd.log").read_text()[-2000:]
                )
            time.sleep(0.3)

    def _mount_btrfs(self) -> None:
        """A btrfs file system in a sparse file under the root, mounted as the data root."""
        assert shutil.which("mkfs.btrfs"), (
            "mkfs.btrfs is missing — install btrfs-progs (`bash .ci/test-tools.sh`, run by "
            "`make setup`)"
        )
        image = self.root / "btrfs.img"
        with image.open("wb") as file:
            file.truncate(_bytes(self.btrfs_size))
        subprocess.run(["mkfs.btrfs", "-q", str(image)], check=True, capture_output=True)
        (self.root / "data").mkdir()
        subprocess.run(
            ["mount", "-o", "loop", str(image), str(self.root / "data")],
            check=True,
            capture_output=True,
        )
        _enable_simple_quotas(self.root / "data")

    def stop(self, timeout: float = 60) -> None:
        """Stop dockerd (SIGTERM: its containers are stopped and it exits), and wait."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def load_image(self, image: str) -> None:
        """Copy ``image`` from the shared engine into this one."""
        save = subprocess.Popen(["docker", "save", image], stdout=subprocess.PIPE)
        subprocess.run(
            ["docker", "-H", self.host, "load", "-q"],
            stdin=save.stdout,
            check=True,
            capture_output=True,
        )
        assert save.wait() == 0

    def remove(self) -> None:
        """Stop the engine and remove everything it had (mounts first)."""
        if self.process is not None and self.process.poll() is None:
            if self.answers():
                ids = self.docker("ps", "-aq", check=False).stdout.split()
                if ids:
                    self.docker("rm", "-f", *ids, check=False)
            self.stop()
        mounts = [
            line.split()[1]
            for line in Path("/proc/mounts").read_text().splitlines()
            if str(self.root) in line.split()[1]
        ]
        for mount in sorted(mounts, key=len, reverse=True):
            subprocess.run(["umount", "-l", mount], capture_output=True)
        shutil.rmtree(self.root, ignore_errors=True)
        subprocess.run(["ip", "link", "del", BRIDGE], capture_output=True)


def _enable_simple_quotas(mount: Path) -> None:
    """Turn on btrfs simple quotas on ``mount`` (see the module docstring for why)."""
    assert Path("/sys/fs/btrfs/features/simple_quota").exists(), (
        "this kernel has no btrfs simple quotas (6.7 or later has them), which the disk-limit "
        "tests need to count a sandbox's writes reliably"
    )
    fd = os.open(mount, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.ioctl(fd, QUOTA_CTL, struct.pack("QQ", ENABLE_SIMPLE_QUOTA, 0))
    finally:
        os.close(fd)


def _bytes(size: str) -> int:
    return int(size[:-1]) * {"M": 2**20, "G": 2**30}[size[-1]]


def engine_env(engine: SpareEngine) -> dict[str, str]:
    """The environment of a process that must talk to ``engine``."""
    return {**os.environ, "DOCKER_HOST": engine.host}
