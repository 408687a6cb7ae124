"""Build the two images of the Dockerfile where no image registry is reachable, as the image tests use them.

Run as its own process (``python imagebuild.py WORKDIR``) at the start of a session that collects the
image tests (tests/deploy/conftest.py), so the slow part overlaps the rest of the suite; the tests wait
on the marker files it leaves (``WORKDIR/<stage>.ok`` or ``<stage>.failed`` holding the reason).

Stages, in order: ``base`` (a Debian bookworm root file system with Debian's own python3, made by
``mmdebstrap`` from the host's apt sources and ``podman import``-ed: the tarball lives in WORKDIR, so
it is made once per run and removed with it), ``collector`` and ``full`` (``podman build --target``
with ``BASE_IMAGE`` set to that base).

Podman as this machine runs it (root, Debian's podman 4.3): ``runc`` (crun refuses hybrid cgroups),
``cgroup_manager = "cgroupfs"`` and ``default_ulimits = []`` in a containers.conf of our own
(``CONTAINERS_CONF``, with the CNI network configs under WORKDIR too), host networking for the
containers the tests run themselves, and a storage root under WORKDIR so two runs never share
images or containers and ``reset`` leaves nothing behind. HTTPS inside a build (pip, to PyPI) trusts
the host's CA bundle (``SSL_CERT_FILE``) passed as a build secret: it is in no layer of any image.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
# The collector image's name as deploy/k8s refers to it; the full image is the same name, "-full" tag.
COLLECTOR = f"localhost/kafka-compaction-monitor:{VERSION}"
FULL = f"localhost/kafka-compaction-monitor:{VERSION}-full"
BASE = "localhost/compaction-monitor-base:bookworm"
STAGES = ("base", "collector", "full")
TOOLS = ("podman", "runc", "mmdebstrap")
# On pytest-xdist the controller builds, once for every worker: its work dir, in each worker's workerinput.
WORKERINPUT_KEY = "compaction_monitor_image_build"

CONTAINERS_CONF = """\
# written by tests/deploy/imagebuild.py: podman as this machine can run it
[containers]
default_ulimits = []
[engine]
cgroup_manager = "cgroupfs"
runtime = "runc"
events_logger = "file"
[network]
network_config_dir = "{cni}"
"""

# Debian's own python3 (3.11 on bookworm) and what the Dockerfile's stages use: the venv module,
# useradd (passwd), apt, the CA certificates a client's TLS verifies against.
BASE_PACKAGES = "python3,python3-venv,passwd,ca-certificates"


def missing_reason() -> str | None:
    """Why the images cannot be built here, or None."""
    absent = [t for t in TOOLS if shutil.which(t) is None]
    if absent:
        return f"{', '.join(absent)} not installed (./dev setup installs podman, runc and mmdebstrap as root)"
    if os.geteuid() != 0:
        return "podman and mmdebstrap run as root in these tests (rootless podman needs subuid ranges set up)"
    return None


class Podman:
    """podman with this run's own configuration and storage under ``workdir``."""

    def __init__(self, workdir: Path):
        self.workdir = Path(workdir)
        self.conf = self.workdir / "containers.conf"
        self.storage = self.workdir / "storage"
        # podman refuses a runroot longer than 50 characters: a short one named after the work dir
        self.runroot = Path(tempfile.gettempdir()) / f"cmrun-{hashlib.sha1(bytes(self.workdir)).hexdigest()[:12]}"

    def argv(self, *args: str) -> list[str]:
        s = self.storage
        return ["podman", "--root", str(s / "root"), "--runroot", str(self.runroot), "--tmpdir", str(s / "tmp"),
                "--storage-driver", "overlay", *args]

    def wrapper(self) -> Path:
        """An executable that is this podman (for podman-compose's ``--podman-path``: 1.0.3 puts its
        ``--podman-args`` after the subcommand, where global flags are refused)."""
        path = self.workdir / "podman"
        path.write_text("#!/bin/sh\nexport CONTAINERS_CONF=" + shlex.quote(str(self.conf)) + "\nexec "
                        + " ".join(shlex.quote(a) for a in self.argv()) + ' "$@"\n')
        path.chmod(0o755)
        return path

    def env(self) -> dict[str, str]:
        return {**os.environ, "CONTAINERS_CONF": str(self.conf)}

    def run(self, *args: str, timeout: float = 120, check: bool = True) -> subprocess.CompletedProcess:
        r = subprocess.run(self.argv(*args), env=self.env(), capture_output=True, text=True, timeout=timeout)
        if check and r.returncode != 0:
            raise RuntimeError(f"podman {' '.join(args)} exited {r.returncode}: {r.stderr[-3000:]}")
        return r

    def size(self, image: str) -> int:
        """The image's size in bytes, as podman measures it (every layer, uncompressed)."""
        return int(self.run("image", "inspect", image, "--format", "{{.Size}}").stdout.strip())

    def reset(self) -> None:
        """Remove every container and image of this storage root, then the storage itself."""
        if self.storage.exists():
            self.run("rm", "--all", "--force", "--time", "0", check=False, timeout=120)
            self.run("system", "reset", "--force", check=False, timeout=300)
            for path in (self.storage, self.runroot):
                subprocess.run(["umount", "-R", str(path)], capture_output=True)  # in case reset left a mount
                shutil.rmtree(path, ignore_errors=True)


def is_image_test(nodeid_or_path: str) -> bool:
    """A test of the images (tests/deploy/test_images*.py): the session builds them only if it runs one."""
    return Path(str(nodeid_or_path).split("::")[0]).name.startswith("test_images")


def start(workdir: Path) -> subprocess.Popen:
    """This script on ``workdir`` in the background (its own process group), output in ``build.log``."""
    with open(Path(workdir) / "build.log", "w") as log:
        return subprocess.Popen([sys.executable, __file__, str(workdir)], stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)


def finish(proc: subprocess.Popen | None, workdir: Path, artifacts: Path) -> None:
    """The end of the session's build: stopped if still running, its log kept in ``artifacts`` (for a failed
    run's inspection, as the broker's logs are), its storage (every image and container) and work dir removed."""
    if proc is not None and proc.poll() is None:  # its own process group: mmdebstrap's and podman's children with it
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(30)
    workdir = Path(workdir)
    log = workdir / "build.log"
    if log.exists():
        artifacts.mkdir(exist_ok=True)
        shutil.copyfile(log, artifacts / "image-build.log")
    Podman(workdir).reset()
    shutil.rmtree(workdir, ignore_errors=True)


def _step(workdir: Path, stage: str, argv: list[str], env: dict | None = None, timeout: float = 1200) -> None:
    print(f"[imagebuild] {stage}: {' '.join(argv)}", flush=True)
    t0 = time.monotonic()
    r = subprocess.run(argv, env=env, stdout=sys.stdout, stderr=subprocess.STDOUT, timeout=timeout)
    if r.returncode != 0:
        raise RuntimeError(f"{stage}: {argv[0]} exited {r.returncode} (see {workdir / 'build.log'})")
    print(f"[imagebuild] {stage}: done in {time.monotonic() - t0:.0f} s", flush=True)


def build(workdir: Path) -> None:
    """Every stage in order; each leaves ``<stage>.ok``, or ``<stage>.failed`` with the reason and no later
    stage runs."""
    workdir = Path(workdir)
    podman = Podman(workdir)
    (workdir / "cni").mkdir()
    podman.conf.write_text(CONTAINERS_CONF.format(cni=workdir / "cni"))
    stage = "base"
    try:
        tarball = workdir / "bookworm.tar"
        sources = Path("/etc/apt/sources.list.d/debian.sources")
        mirror = [str(sources)] if sources.exists() else []  # else mmdebstrap reads /etc/apt/sources.list
        _step(workdir, stage, ["mmdebstrap", "--variant=apt", f"--include={BASE_PACKAGES}",
                               # the host's apt settings for its mirror (a dated snapshot needs these two)
                               '--aptopt=Acquire::Check-Valid-Until "false"', '--aptopt=Acquire::Check-Date "false"',
                               "bookworm", str(tarball), *mirror])
        _step(workdir, stage, podman.argv("import", "--change", "ENV=PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:"
                                          "/usr/bin:/sbin:/bin", str(tarball), BASE), env=podman.env())
        tarball.unlink()
        (workdir / "base.ok").write_text(BASE)
        ca = os.environ.get("SSL_CERT_FILE") or "/etc/ssl/certs/ca-certificates.crt"
        for stage, tag in (("collector", COLLECTOR), ("full", FULL)):
            secret = ["--secret", f"id=ca_bundle,src={ca}"] if Path(ca).is_file() else []
            _step(workdir, stage, podman.argv("build", "--format", "docker", "--network", "host", *secret,
                                              "--build-arg", f"BASE_IMAGE={BASE}", "--target", stage, "--tag", tag,
                                              "--file", str(ROOT / "Dockerfile"), str(ROOT)), env=podman.env())
            (workdir / f"{stage}.ok").write_text(tag)
    except Exception as exc:  # the tests read the reason from the marker file
        (workdir / f"{stage}.failed").write_text(str(exc))
        print(f"[imagebuild] {stage} failed: {exc}", flush=True)
        raise SystemExit(1)


def wait_stage(workdir: Path, stage: str, proc: subprocess.Popen | None, timeout: float = 1500) -> str:
    """Wait for ``stage`` (and those before it) to be built; its image name. Raises with the reason and the
    build log's tail when it failed or the build process ended without it."""
    workdir = Path(workdir)
    deadline = time.monotonic() + timeout
    log = workdir / "build.log"
    while time.monotonic() < deadline:
        if (workdir / f"{stage}.ok").exists():
            return (workdir / f"{stage}.ok").read_text()
        failed = [s for s in STAGES if (workdir / f"{s}.failed").exists()]
        ended = proc is not None and proc.poll() is not None
        if failed or ended:
            why = (workdir / f"{failed[0]}.failed").read_text() if failed else f"build process exited {proc.returncode}"
            tail = log.read_text(errors="replace")[-4000:] if log.exists() else ""
            raise RuntimeError(f"image stage {stage!r} not built: {why}\n{tail}")
        time.sleep(1)  # the poll interval of a wait on the stage's marker file
    raise TimeoutError(f"image stage {stage!r} not built within {timeout:.0f} s (see {log})")


if __name__ == "__main__":
    build(Path(sys.argv[1]))
