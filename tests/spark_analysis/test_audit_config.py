"""The audit's topic configs follow the collector's rule (monitor.model.topicconfig.admin_refusal and
effective_config): an admin API asked and not telling makes a topic's config unknown, and the figures
that depend on it are null with the reason; Kafka's defaults only with no admin API at all, labelled so."""

from __future__ import annotations

import html
import json
import shutil
import socket
import subprocess
import sys

import pyarrow.parquet as pq

from collectors.admin.state import AdminSnapshot
from monitor.contract.auditrun import CONFIG_UNKNOWN_NOTE
from monitor.model.topicconfig import ADMIN, ADMIN_DOWN, CONFIG_FILE, DEFAULT, NOT_LISTED, REFUSED, UNKNOWN, TopicConfig
from recordfixtures import three_v2_batches
from spark_analysis.audit import AuditInputs
from spark_analysis.audit.tables import CONFIG_DEPENDENT, config_columns

BLIND = "refused: no DescribeConfigs on TOPIC orders for User:blind (TOPIC_AUTHORIZATION_FAILED)"


def test_the_collector_and_the_audit_share_one_refusal_rule():
    import collectors.app
    import monitor.model.topicconfig

    assert collectors.app.admin_refusal is monitor.model.topicconfig.admin_refusal


def test_a_topic_the_admin_api_did_not_give_has_its_config_unknown_never_kafkas_defaults():
    snap = AdminSnapshot(0.0, not_compacted={"logs": TopicConfig()}, refused={"orders": BLIND},
                         listed=frozenset({"orders", "logs"}), principal="User:blind")
    given = TopicConfig.from_strings({"cleanup.policy": "compact", "delete.retention.ms": 60000})
    inputs = AuditInputs(kind="segments", topic_configs={"given": given}, admin_asked=True, admin=snap,
                         file_configs={"filed": {"min.cleanable.dirty.ratio": 0.1}})
    orders = inputs.effective("orders")
    assert orders.source == UNKNOWN and orders.refusal.code == REFUSED and orders.refusal.text == BLIND
    assert not orders.known("delete.retention.ms") and not orders.known("min.cleanable.dirty.ratio")
    hidden = inputs.effective("hidden")  # not listed for this principal: no Describe
    assert hidden.refusal.code == NOT_LISTED and "User:blind" in hidden.refusal.text
    assert inputs.effective("given").source == ADMIN and inputs.config("given").delete_retention_ms == 60000
    filed = inputs.effective("filed")  # monitor.yaml's value, marked as such; the rest still unknown
    assert filed.sources["min.cleanable.dirty.ratio"] == CONFIG_FILE and filed.config.min_cleanable_dirty_ratio == 0.1
    assert filed.sources["delete.retention.ms"] == UNKNOWN

    down = AuditInputs(kind="segments", admin_asked=True, admin_error="127.0.0.1:9: connection refused")
    ec = down.effective("orders")
    assert ec.refusal.code == ADMIN_DOWN and "127.0.0.1:9: connection refused" in ec.refusal.text
    assert ec.unknown_keys and ec.source == UNKNOWN

    nobody = AuditInputs(kind="segments").effective("orders")  # no admin API at all: Kafka's, said so
    assert nobody.source == DEFAULT and nobody.config.delete_retention_ms == 86_400_000 and not nobody.unknown_keys


def test_only_the_figures_that_read_an_unknown_value_are_left_unknown():
    row = {c: 1 for c in CONFIG_DEPENDENT} | {"records": 6, "bytes": 300, "tombstones": 2, "clean_bytes": 0}
    inputs = AuditInputs(kind="segments", admin_asked=True, admin_error="down",
                         file_configs={"t": {"delete.retention.ms": 60000}})
    got = config_columns(row, inputs.effective("t"))
    assert got["records"] == 6 and got["bytes"] == 300 and got["tombstones"] == 2 and got["clean_bytes"] == 0
    # delete.retention.ms is monitor.yaml's: the figures reading only it stay; the bound U
    # (min.compaction.lag.ms) is unknown, so is all that a clean would remove
    assert got["delete_retention_ms"] == 1 and got["tombstones_past_retention"] == 1
    assert got["reclaimable_bytes"] is None and got["cleanable_ratio"] is None and got["eligible"] is None
    assert got["config_source"] == CONFIG_FILE and "min.compaction.lag.ms" in got["config_unknown_reason"]
    assert "the admin API did not answer: down" in got["config_unknown_reason"]
    known = config_columns(row, AuditInputs(kind="segments").effective("t"))
    assert all(known[c] == 1 for c in CONFIG_DEPENDENT) and known["config_unknown_reason"] is None
    assert known["config_source"] == DEFAULT


def test_audit_with_its_admin_api_down_passes_no_default_off_as_a_topics_config(tmp_path):
    logs = tmp_path / "logs"
    three_v2_batches(logs / "orders-0" / "00000000000000000000.log")
    shutil.copytree(logs / "orders-0", logs / "accounts-0")
    cfg = tmp_path / "monitor.yaml"
    cfg.write_text("clusters:\n  - name: c\n    topics:\n      orders: {delete.retention.ms: 60000}\n")
    out = tmp_path / "audits"
    with socket.socket() as held:  # the port stays bound (nobody else takes it) and refuses connections
        held.bind(("127.0.0.1", 0))
        port = held.getsockname()[1]
        r = subprocess.run([sys.executable, "-m", "cli", "audit", "--input", str(logs), "--out", str(out),
                            "--config", str(cfg), "--bootstrap-servers", f"127.0.0.1:{port}"],
                           capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert f"topic configs from 127.0.0.1:{port} unavailable" in r.stderr and "never with Kafka's defaults" in r.stderr
    run = max(p for p in out.iterdir() if p.name.startswith("run-"))
    summary = json.loads((run / "summary.json").read_text())
    parts = {r["topic"]: r for r in pq.read_table(run / "partitions").to_pylist()}
    size = (logs / "orders-0" / "00000000000000000000.log").stat().st_size
    for topic in ("orders", "accounts"):  # what depends on no config: counted as ever
        assert parts[topic]["records"] == 6 and parts[topic]["bytes"] == size
    for col, keys in CONFIG_DEPENDENT.items():  # orders: only what reads monitor.yaml's value alone is known
        assert parts["accounts"][col] is None, col
        if col == "next_removable_ms" and not parts["orders"]["tombstones"] and not parts["orders"]["control_records"]:
            assert parts["orders"][col] is None  # no tombstone or marker: nothing to remove, whatever the config
            continue
        assert (parts["orders"][col] is None) == (keys != ("delete.retention.ms",)), col
    acc = parts["accounts"]
    assert acc["config_source"] == UNKNOWN and f"127.0.0.1:{port}" in acc["config_unknown_reason"]
    assert parts["orders"]["config_source"] == CONFIG_FILE and parts["orders"]["delete_retention_ms"] == 60000
    assert summary["topic_configs"]["accounts"]["source"] == UNKNOWN
    assert "delete.retention.ms" in summary["topic_configs"]["accounts"]["unknown"]
    assert "delete.retention.ms" not in summary["topic_configs"]["orders"]["unknown"]
    assert summary["config_unknown"]["partitions"] == 2 and summary["config_unknown"]["note"]
    topics = {t["topic"]: t for t in pq.read_table(run / "topics").to_pylist()}
    assert topics["accounts"]["reclaimable_bytes"] is None and topics["accounts"]["records"] == 6
    report = (run / "report.html").read_text()  # the note the Audit page shows too (monitor.contract.auditrun)
    assert f"Topic config unknown for 2 topic(s): {CONFIG_UNKNOWN_NOTE} above." in report
    for topic in ("accounts", "orders"):
        assert f"<li>{topic}: {html.escape(parts[topic]['config_unknown_reason'])}</li>" in report
    assert "86400000" not in json.dumps(parts["accounts"])  # Kafka's default delete.retention.ms nowhere
