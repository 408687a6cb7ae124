"""The Dockerfile's two images, built here (tests/deploy/imagebuild.py: a Debian bookworm base from
Debian's own packages, podman) and run: the collector as its non-root user against the session broker
with the log dir mounted read-only, its /metrics scraped and its health check run; the full image's
``audit`` on a copy of a log dir and its dashboard's health check; and deploy/docker-compose.yml brought
up with podman-compose as far as this machine can run it.

These tests run last in a session (tests/deploy/conftest.py): the build runs in the background from
the start and they wait for it.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from kafkatools import (compacted, copy_partition, create_topic, partition_dir, unique_topic, wait_cleaned_up_to_active,
                        watermarks, write_rounds)
from localkafka.broker import free_port
from waiting import wait_for

# slow; and the first image test may wait for the whole background build (tests/deploy/conftest.py)
pytestmark = [pytest.mark.slow, pytest.mark.timeout(1500)]

UID = 10001  # the Dockerfile's `monitor` user
IN_CONTAINER_LOG_DIR = "/var/lib/kafka/data"


def samples(text: str) -> list:
    return [s for fam in text_string_to_metric_families(text) for s in fam.samples]


class Container:
    """A detached container of this run's podman, removed on exit."""

    def __init__(self, podman, name: str, *args: str):
        self.podman, self.name = podman, name
        podman.run("run", "--detach", "--name", name, *args)

    def exec(self, *argv: str, check: bool = True):
        return self.podman.run("exec", self.name, *argv, check=check)

    def healthy(self) -> bool:
        """The image's own HEALTHCHECK, run now (podman has no systemd timer here to run it on schedule)."""
        return self.podman.run("healthcheck", "run", self.name, check=False).returncode == 0

    def logs(self) -> str:
        r = self.podman.run("logs", self.name, check=False)
        return (r.stdout + r.stderr)[-4000:]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.podman.run("rm", "--force", "--time", "0", self.name, check=False)


def test_the_collector_image_serves_a_compacted_partition_from_the_broker_as_its_own_user(images, kafka):
    """Collector image, non-root, log dir read-only: its series of a cleaned partition are Kafka's own
    figures (the cleaner's checkpoint, the high watermark); its health check passes; it carries the C
    record decoder but no compiler, no Java, no PySpark."""
    image = images.image("collector")
    t = create_topic(kafka.bootstrap, unique_topic("image"), **compacted())
    write_rounds(kafka.bootstrap, t, 3, keys=50)
    checkpoint = wait_cleaned_up_to_active(kafka.log_dir, t)
    _, high = watermarks(kafka.bootstrap, t)
    port = free_port()
    with Container(images.podman, f"cm-collector-{os.getpid()}-{port}", "--network", "host",
                   "--env", f"COMPACTION_MONITOR_HEALTH_URL=http://127.0.0.1:{port}/metrics",
                   "--volume", f"{kafka.log_dir}:{IN_CONTAINER_LOG_DIR}:ro", image,
                   "collect", "--bootstrap-servers", kafka.bootstrap, "--jmx-url", kafka.jmx_url,
                   "--log-dir", IN_CONTAINER_LOG_DIR, "--cluster", "image", "--port", str(port),
                   "--address", "127.0.0.1", "--granularity", "partition", "--topics-allow", t) as c:
        last = {"text": ""}

        def scraped():  # every source up (the JMX page's first scrape may be slow) and the topic's series
            r = c.exec("python", "-c", f"import urllib.request; print(urllib.request.urlopen("
                                       f"'http://127.0.0.1:{port}/metrics', timeout=5).read().decode())", check=False)
            last["text"] = r.stdout if r.returncode == 0 else r.stderr
            if r.returncode != 0 or f'topic="{t}"' not in r.stdout:
                return None
            up = {s.labels["kind"]: s.value for s in samples(r.stdout) if s.name == "kafka_compaction_source_up"}
            return r.stdout if set(up) >= {"admin", "jmx", "log_dirs"} and set(up.values()) == {1.0} else None

        try:
            text = wait_for(scraped, 120, f"the collector container's series of {t}, every source up", interval=1)
        except Exception:
            said = [ln for ln in last["text"].splitlines() if "source_" in ln or "Error" in ln]
            raise AssertionError(f"collector container: {said}\n{c.logs()}") from None
        got = {(s.name, s.labels.get("topic"), s.labels.get("partition")): s.value for s in samples(text)}
        assert got[("kafka_compaction_partition_first_dirty_offset", t, "0")] == checkpoint
        assert got[("kafka_compaction_partition_log_end_offset", t, "0")] == high
        up = [s for s in samples(text) if s.name == "kafka_compaction_log_dir_up"]
        assert [(s.labels["log_dir"], s.value) for s in up] == [(IN_CONTAINER_LOG_DIR, 1.0)]
        assert c.exec("id", "-u").stdout.strip() == str(UID)
        assert c.healthy(), c.logs()
        probe = ("import importlib.util as u, shutil; import monitor.kafka.record._decode; "
                 "print([m for m in ('pyspark', 'streamlit') if u.find_spec(m)], "
                 "[b for b in ('gcc', 'cc', 'java') if shutil.which(b)])")
        assert c.exec("python", "-c", probe).stdout.strip() == "[] []"


def test_the_full_image_audits_a_copy_of_a_log_dir(images, kafka, tmp_path):
    """``audit`` in the full image (PySpark on its own Java), as its non-root user, on a read-only copy of
    a partition: every record and tombstone written (nothing cleaned: min.cleanable.dirty.ratio 1)."""
    image = images.image("full")
    t = create_topic(kafka.bootstrap, unique_topic("image-audit"), **compacted(**{"min.cleanable.dirty.ratio": 1.0}))
    written = write_rounds(kafka.bootstrap, t, 2, keys=40, tombstones=(0, 1, 2))
    copy = tmp_path / "copy"
    copy_partition(partition_dir(kafka.log_dir, t), copy)
    out = tmp_path / "out"
    out.mkdir()
    os.chown(out, UID, UID)  # the image's user writes the report
    r = images.podman.run("run", "--rm", "--network", "host", "--env", "SPARK_LOCAL_IP=127.0.0.1",
                          "--volume", f"{copy}:/audit/input:ro", "--volume", f"{out}:/audit/out", image,
                          "audit", "--input", "/audit/input", "--out", "/audit/out", "--master", "local[1]",
                          timeout=600, check=False)
    assert r.returncode == 0, r.stderr[-4000:]
    latest = json.loads((out / "latest.json").read_text())
    run = out / Path(latest["path"]).relative_to("/audit/out")
    summary = json.loads((run / "summary.json").read_text())
    assert (summary["partitions"], summary["records"], summary["tombstones"]) == (1, written, 3)


def test_the_full_image_health_check_is_the_dashboards(images):
    """The full image's default command is the dashboard and its health check asks the dashboard, not the
    collector's :9690 (which nothing in that container serves)."""
    image = images.image("full")
    cfg = json.loads(images.podman.run("image", "inspect", image, "--format", "{{json .Config}}").stdout)
    assert cfg["Cmd"][0] == "dashboard" and "COMPACTION_MONITOR_HEALTH_URL=http://127.0.0.1:8501/_stcore/health" \
        in cfg["Env"] and cfg["User"] == "monitor", cfg
    port = free_port()
    with Container(images.podman, f"cm-dashboard-{os.getpid()}-{port}", "--network", "host",
                   "--env", f"COMPACTION_MONITOR_HEALTH_URL=http://127.0.0.1:{port}/_stcore/health",
                   image, "dashboard", "--address", "127.0.0.1", "--port", str(port)) as c:
        try:
            wait_for(c.healthy, 90, "the dashboard container's health check", interval=1)
        except Exception:
            raise AssertionError(f"dashboard container: {c.logs()}") from None


def test_image_sizes_are_the_ones_the_docs_give(images):
    """docs/deployment.md's image sizes are these images' (podman's measure: every layer, uncompressed), to
    within 10 %: re-measure and update that page when a dependency moves them."""
    import re

    readme = (Path(__file__).resolve().parents[2] / "docs" / "deployment.md").read_text()
    said = {m.group(1): float(m.group(2)) for m in re.finditer(r"`(collector|full)` image: ([\d.]+) MB", readme)}
    measured = {stage: images.podman.size(images.image(stage)) / 1e6 for stage in ("collector", "full")}
    assert set(said) == {"collector", "full"}, said
    for stage, size in measured.items():
        assert abs(said[stage] - size) <= 0.10 * size, (stage, said[stage], f"measured {size:.0f} MB")
