"""deploy/docker-compose.yml brought up with podman-compose, as far as this machine can run it.

The stack as committed, with three changes the test makes to a copy (paths made absolute to read it from
a temporary folder): the services built from the Dockerfile use this run's images (tests/deploy/
imagebuild.py) rather than building again; no port is published on the host (two runs, and the rest of
the suite, never race for 9690, 8501, 3000 ...): the test reaches each container through podman; the
one-shot JMX agent download trusts this machine's CA bundle, mounted at run time (HTTPS leaves this
machine through an intercepting proxy), never in an image.

What runs here: the jmx-agent download, the collector, the dashboard. What cannot, said in the skip:
the services whose images come from a registry (Kafka, Prometheus, Alertmanager, Grafana).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from waiting import wait_for

# slow; and the first image test may wait for the whole background build (tests/deploy/conftest.py)
pytestmark = [pytest.mark.slow, pytest.mark.timeout(1500)]

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
OURS = {"jmx-agent", "compaction-monitor", "dashboard"}  # built from the Dockerfile
CA_IN_CONTAINER = "/etc/compaction-monitor-test/ca.crt"


def _absolute(volume: str) -> str:
    src, _, rest = volume.partition(":")
    return f"{(DEPLOY / src).resolve()}:{rest}" if src.startswith(".") else volume


def derived_compose(doc: dict, tags: dict[str, str], ca: Path | None) -> dict:
    """The committed stack with the test's three changes (module docstring)."""
    for svc in doc["services"].values():
        build = svc.pop("build", None)
        if build:
            svc["image"] = tags[build.get("target", "collector")]
        svc.pop("ports", None)
        svc["volumes"] = [_absolute(v) for v in svc.get("volumes", [])]
    if ca is not None:
        jmx = doc["services"]["jmx-agent"]
        jmx["volumes"].append(f"{ca}:{CA_IN_CONTAINER}:ro")
        jmx["environment"] = {"SSL_CERT_FILE": CA_IN_CONTAINER}
    return doc


class Stack:
    def __init__(self, images, workdir: Path):
        self.podman = images.podman
        self.project = f"cmtest{os.getpid()}"
        tags = {stage: images.image(stage) for stage in ("collector", "full")}
        ca = Path(os.environ.get("SSL_CERT_FILE") or "/etc/ssl/certs/ca-certificates.crt")
        doc = derived_compose(yaml.safe_load((DEPLOY / "docker-compose.yml").read_text()), tags,
                              ca if ca.is_file() else None)
        self.file = workdir / "docker-compose.yml"
        self.file.write_text(yaml.safe_dump(doc, sort_keys=False))
        self.services = list(doc["services"])
        self.images = {name: svc["image"] for name, svc in doc["services"].items()}
        self.wrapper = self.podman.wrapper()
        self.output = ""

    def compose(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
        r = subprocess.run(["podman-compose", "--podman-path", str(self.wrapper), "-p", self.project,
                            "-f", str(self.file), *args], capture_output=True, text=True, timeout=timeout,
                           cwd=self.file.parent)
        self.output += r.stdout + r.stderr
        return r

    def container(self, service: str) -> str:
        return f"{self.project}_{service}_1"

    def state(self, service: str) -> dict | None:
        r = self.podman.run("container", "inspect", self.container(service), "--format",
                            "{{.State.Status}} {{.State.ExitCode}}", check=False)
        if r.returncode != 0:
            return None
        status, code = r.stdout.split()
        return {"status": status, "exit": int(code)}

    def healthy(self, service: str) -> bool:
        return self.podman.run("healthcheck", "run", self.container(service), check=False).returncode == 0

    def logs(self, service: str) -> str:
        r = self.podman.run("logs", self.container(service), check=False)
        return (r.stdout + r.stderr)[-3000:]

    def down(self) -> None:
        self.compose("down", "--volumes", timeout=300)
        network = f"{self.project}_default"
        self.podman.run("network", "rm", "--force", network, check=False)
        shutil.rmtree(Path("/var/lib/cni/networks") / network, ignore_errors=True)  # CNI's address book


@pytest.fixture(scope="module")
def stack(images, tmp_path_factory):
    if shutil.which("podman-compose") is None:
        pytest.skip("podman-compose not installed (./dev setup installs Debian's as root)")
    s = Stack(images, tmp_path_factory.mktemp("compose"))
    try:
        s.compose("up", "--detach", "--no-build")
        yield s
    finally:
        s.down()


def test_the_compose_stack_runs_its_own_services(stack, images):
    """The JMX agent downloaded and checked against Maven Central (the same jar Maven resolves for the
    test brokers); the collector and the dashboard up, each healthy by its own image's health check;
    the collector serving /metrics, the broker it is configured for absent (its admin source down)."""
    from localkafka import jars

    url = yaml.safe_load(stack.file.read_text())["services"]["jmx-agent"]["command"][0]
    assert f"/{jars.JMX_EXPORTER_VERSION}/" in url, (url, "not the version localkafka/pom.xml pins")
    done = wait_for(lambda: (lambda st: st if st and st["status"] == "exited" else None)(stack.state("jmx-agent")),
                    180, "the jmx-agent download to finish", interval=1)
    assert done["exit"] == 0, stack.logs("jmx-agent")
    mount = images.podman.run("volume", "inspect", f"{stack.project}_jmx-agent", "--format", "{{.Mountpoint}}")
    jar = Path(mount.stdout.strip()) / "jmx_prometheus_javaagent.jar"
    with zipfile.ZipFile(jar) as z:
        assert "Premain-Class" in z.read("META-INF/MANIFEST.MF").decode()  # a Java agent
    try:
        cached = jars.agent_jar(jars.libs_dir())
    except Exception:  # noqa: BLE001 -- no Maven cache here: the download's own SHA-1 check stands
        cached = None
    if cached is not None and cached.name == jar.name.replace(".jar", f"-{jars.JMX_EXPORTER_VERSION}.jar"):
        assert hashlib.sha256(jar.read_bytes()).digest() == hashlib.sha256(cached.read_bytes()).digest()

    for service in ("compaction-monitor", "dashboard"):
        try:
            wait_for(lambda: stack.healthy(service), 120, f"the compose {service}'s health check", interval=1)
        except Exception:
            raise AssertionError(f"{service}: {stack.state(service)}\n{stack.logs(service)}\n"
                                 f"{stack.output[-3000:]}") from None
    r = images.podman.run("exec", stack.container("compaction-monitor"), "python", "-c",
                          "import urllib.request; print(urllib.request.urlopen("
                          "'http://127.0.0.1:9690/metrics', timeout=5).read().decode())")
    up = {s.labels["kind"]: s.value for fam in text_string_to_metric_families(r.stdout) for s in fam.samples
          if s.name == "kafka_compaction_source_up" and s.labels.get("cluster") == "compose"}
    assert up.get("admin") == 0.0, up  # kafka:9092 is not there (see the skip below)


def test_the_compose_services_from_a_registry(stack):
    """Kafka, Prometheus, Alertmanager and Grafana run from registry images; where none can be pulled
    (as on the machines this project is developed on) this says so, with podman's own words; where they
    can, they must run."""
    registry = [s for s in stack.services if s not in OURS]
    assert registry == ["kafka", "prometheus", "alertmanager", "grafana"], registry
    absent = {s: stack.images[s] for s in registry if (stack.state(s) or {}).get("status") != "running"}
    if absent:
        lines = stack.output.splitlines()
        # podman names docker.io's images docker://<name> in its errors
        errors = {s: next((ln.strip() for ln in lines if "Error" in ln and img.removeprefix("docker.io/") in ln), None)
                  for s, img in absent.items()}
        assert all(errors.values()), ("a registry service did not run, and not for want of its image", errors,
                                      stack.output[-4000:])
        unreachable = [e for e in errors.values() if "no such host" in e or "connection refused" in e
                       or "i/o timeout" in e or "network is unreachable" in e]
        assert unreachable == list(errors.values()), ("an image pull failed for another reason", errors)
        pytest.skip(f"not run here: {', '.join(f'{s} ({i})' for s, i in absent.items())}: no image registry "
                    f"is reachable (podman: {errors[next(iter(errors))]}); and podman's CNI network here has no "
                    "dnsname plugin, so services would not find each other by name (kafka:9092, "
                    "prometheus:9090) even if they ran. Each of these parts is tested without containers "
                    "elsewhere (the rules with promtool and Prometheus, the Grafana dashboard, the collector "
                    "against real brokers)")
    for service in registry:
        assert stack.state(service)["status"] == "running", (service, stack.logs(service))
