"""The brokers' log cleaner settings, against real brokers: read per broker with describe_configs,
exported with their source, changed dynamically (incremental_alter_configs on the brokers' default, as
``kafka-configs --alter --entity-type brokers --entity-default`` does) and seen by the next refresh and
the next audit's estimate; a broker with log.cleaner.enable=false gives the cause cleaner_disabled and
fires CleanerDisabled. Expected values come from what the test sets on the broker, Kafka's documented
defaults (CleanerConfig) and the copied segments' file sizes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from collecting import make_collector, refresh
from collectors.app import build
from collectors.export.facts import broker_facts
from monitor.settings.config import BrokerConfig, ClusterConfig, Config
from localkafka.kafkatools import configs_tool
from kafkatools import (CLI_MODULE, copy_partition, create_topic, compacted, own_broker, partition_dir, unique_topic,
                        write_rounds)
from waiting import wait_for

pytestmark = [pytest.mark.kafka, pytest.mark.slow]

THROTTLE = 5_000_000.0  # bytes/s: below the model's default 40 MiB/s of one thread, so it decides the rate
IO_MAX = "log.cleaner.io.max.bytes.per.second"


def admin_setting(col, broker: str, key: str):
    """The broker's cleaner setting as the collector's admin source last described it."""
    return next(s.snapshot for s in col.store.statuses() if s.kind == "admin").cleaner_setting(broker, key)


def bval(reg, name: str, broker: str, source: str = "admin"):
    return reg.get_sample_value(name, {"cluster": "local", "broker": broker, "source": source})


def alter_broker_default(bootstrap: str, **settings) -> None:
    """Dynamic cluster-wide broker configs, as an operator sets them: ``kafka-configs.sh --alter
    --entity-type brokers --entity-default`` (confluent-kafka refuses the default entity's empty name)."""
    proc = configs_tool(bootstrap, "--alter", "--entity-type", "brokers", "--entity-default", "--add-config",
                        ",".join(f"{k}={v}" for k, v in settings.items()))
    assert proc.returncode == 0, proc.stderr[-2000:]


def test_dynamic_cleaner_settings_reach_the_metrics_and_the_next_audit(tmp_path_factory, tmp_path):
    with own_broker(tmp_path_factory.mktemp("kafka-cleaner-settings"), "kafka cleaner settings") as state:
        b = str(state.node_id)
        # never cleaned (a ratio of 1 is never exceeded): the dirty sections stay for the audit
        t = create_topic(state.bootstrap, unique_topic("cleaner-settings"), partitions=2,
                         **compacted(**{"min.cleanable.dirty.ratio": 1}))
        for p in (0, 1):
            write_rounds(state.bootstrap, t, rounds=2 + p, keys=300, partition=p)
        col = make_collector(state)
        try:
            reg = refresh(col)
            # Kafka's defaults (CleanerConfig), as the broker itself reports them
            assert bval(reg, "kafka_compaction_broker_cleaner_threads", b) == 1
            assert bval(reg, "kafka_compaction_broker_cleaner_enabled", b) == 1
            assert bval(reg, "kafka_compaction_broker_cleaner_dedupe_buffer_bytes", b) == 134_217_728
            assert bval(reg, "kafka_compaction_broker_cleaner_io_buffer_load_factor", b) == 0.9
            assert bval(reg, "kafka_compaction_broker_cleaner_io_max_bytes_per_second", b) == 1.7976931348623157e308
            assert bval(reg, "kafka_compaction_broker_cleaner_backoff_seconds", b) == 0.5  # localkafka sets 500 ms
            assert reg.get_sample_value("kafka_compaction_broker_cleaner_settings_known",
                                        {"cluster": "local", "broker": b, "reason": ""}) == 1

            # LogCleaner.validateReconfiguration: at most double the current thread count per change
            alter_broker_default(state.bootstrap, **{"log.cleaner.threads": 2,
                                                     "log.cleaner.io.max.bytes.per.second": THROTTLE})

            def changed():
                r = refresh(col)
                return (bval(r, "kafka_compaction_broker_cleaner_threads", b),
                        bval(r, "kafka_compaction_broker_cleaner_io_max_bytes_per_second", b)) == (2, THROTTLE)

            wait_for(changed, 60, "the altered cleaner settings in the collector's metrics")
            assert admin_setting(col, b, IO_MAX).kafka_source == "DYNAMIC_DEFAULT_BROKER_CONFIG"
            # the same throttle set on this broker alone (--entity-name): it now comes before the cluster's
            # default, and a fix must name the broker (the audit below reads the same value)
            proc = configs_tool(state.bootstrap, "--alter", "--entity-type", "brokers", "--entity-name", b,
                                "--add-config", f"{IO_MAX}={THROTTLE}")
            assert proc.returncode == 0, proc.stderr[-2000:]
            wait_for(lambda: refresh(col) and admin_setting(col, b, IO_MAX).per_broker, 60,
                     "the throttle described as the broker's own")
            assert admin_setting(col, b, IO_MAX).value == THROTTLE
            assert not admin_setting(col, b, "log.cleaner.threads").per_broker
            facts = broker_facts(b, admin=next(s.snapshot for s in col.store.statuses() if s.kind == "admin"))
            assert (facts.entity(IO_MAX), facts.entity("log.cleaner.threads")) == (b, None)
        finally:
            col.close()

        root = tmp_path / "copy"
        for p in (0, 1):
            copy_partition(partition_dir(state.log_dir, t, p), root)
        out = tmp_path / "audits"
        run = subprocess.run([sys.executable, "-m", CLI_MODULE, "audit", "--input", str(root), "--out", str(out),
                              "--master", "local[1]", "--bootstrap-servers", state.bootstrap, "--load-factor", "0.5"],
                             capture_output=True, text=True, timeout=600)
        assert run.returncode == 0, run.stderr[-3000:]
        latest = json.loads((out / "latest.json").read_text())
        summary = json.loads((Path(latest["path"]) / "summary.json").read_text())

    # the dirty section of each partition: every segment but the active one (no cleaner checkpoint yet)
    dirty = {}
    for p in (0, 1):
        logs = sorted((root / f"{t}-{p}").glob("*.log"))
        dirty[p] = sum(f.stat().st_size for f in logs[:-1])
    c = summary["cleaner"]
    assert (c["threads"], c["io_max_bytes_per_second"], c["load_factor"]) == (2, THROTTLE, 0.5)
    assert c["sources"] == {"log.cleaner.threads": "admin", "log.cleaner.io.max.bytes.per.second": "admin",
                            "log.cleaner.dedupe.buffer.size": "admin", "log.cleaner.io.buffer.load.factor": "flag"}
    # SkimpyOffsetMap: floor(floor(buffer / threads) / 24 B) slots times the load factor
    assert c["keys_per_pass"] == int((134_217_728 // 2 // 24) * 0.5)
    [broker] = summary["brokers"]
    assert (broker["broker"], broker["partitions"], broker["threads"]) == (b, 2, 2)
    # one pass each (300 keys), nothing clean yet: a clean reads its dirty bytes at the throttled rate
    assert broker["summed_seconds"] == pytest.approx(sum(dirty.values()) / THROTTLE)
    assert broker["schedule_seconds"] == pytest.approx(max(dirty.values()) / THROTTLE)  # 2 threads, 2 cleans
    # ... but one throttle serves all threads: the broker needs every byte over it
    assert broker["wall_clock_seconds"] == pytest.approx(sum(dirty.values()) / THROTTLE)
    assert summary["estimated_wall_clock_seconds"] == broker["wall_clock_seconds"]


def samples(reg) -> list:
    from monitor.contract.rule_eval import Sample

    return [Sample(s.name, dict(s.labels), s.value) for fam in reg.collect() for s in fam.samples]


def test_a_disabled_cleaner_is_exported_explained_and_alerted(kafka_cleaner_off):
    """log.cleaner.enable=false (read-only: set at the broker's start; the session's broker of
    tests/conftest.py): the broker starts no cleaner, its compacted partition stays dirty; the collector
    says so, the cause is cleaner_disabled and CleanerDisabled fires on the collector's own series (the
    rule table's Python evaluator)."""
    from monitor.contract.rules import rule
    from monitor.contract.rule_eval import evaluate_rule

    state = kafka_cleaner_off
    b = str(state.node_id)
    t = create_topic(state.bootstrap, unique_topic("cleaner-off"), **compacted())
    write_rounds(state.bootstrap, t, rounds=3, keys=100)
    # no JMX source: without a cleaner the broker has no LogCleaner MBeans, and that source fails
    # with no_cleaner_metrics (see the runbook's CleanerDisabled)
    col = build(Config(clusters=(ClusterConfig(name="local", bootstrap_servers=state.bootstrap, brokers=(
        BrokerConfig(id=b, log_dirs=(state.log_dir,)),)),)))
    try:
        reg = refresh(col)
        assert bval(reg, "kafka_compaction_broker_cleaner_enabled", b) == 0
        assert reg.get_sample_value("kafka_compaction_partition_compaction_cause",
                                    {"cluster": "local", "broker": b, "topic": t, "partition": "0",
                                     "cause": "cleaner_disabled"}) == 1
        [alert] = evaluate_rule(rule("CleanerDisabled", "critical"), samples(reg))
        assert alert.labels == {"cluster": "local", "broker": b, "source": "admin"}
    finally:
        col.close()


def test_a_broker_that_refuses_describe_configs_gives_unknown_settings_with_the_reason(tmp_path_factory):
    """An authorizer denying DescribeConfigs on the cluster (everything else allowed): the cleaner
    settings are unknown with the broker's refusal as the reason, no setting series is exported (never
    Kafka's default in its place), and topic configs still come through."""
    from confluent_kafka.admin import (AclBinding, AclOperation, AclPermissionType, AdminClient, ResourcePatternType,
                                       ResourceType)

    with own_broker(tmp_path_factory.mktemp("kafka-cleaner-acl"), "kafka cleaner acl",
                    **{"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
                       "allow.everyone.if.no.acl.found": "true"}) as state:
        b = str(state.node_id)
        t = create_topic(state.bootstrap, unique_topic("cleaner-acl"), **compacted())
        admin = AdminClient({"bootstrap.servers": state.bootstrap})
        acl = lambda op, perm: AclBinding(ResourceType.BROKER, "kafka-cluster", ResourcePatternType.LITERAL,  # noqa
                                          "User:ANONYMOUS", "*", op, perm)
        for fut in admin.create_acls([acl(AclOperation.ALL, AclPermissionType.ALLOW),
                                      acl(AclOperation.DESCRIBE_CONFIGS, AclPermissionType.DENY)]).values():
            fut.result(30)
        col = make_collector(state)
        try:
            def refused():
                r = refresh(col)
                known = [s for fam in r.collect() for s in fam.samples
                         if s.name == "kafka_compaction_broker_cleaner_settings_known"]
                return known if known and known[0].value == 0 else None

            [known] = wait_for(refused, 60, "the broker refusing describe_configs")
            assert "authoriz" in known.labels["reason"].lower() and known.labels["broker"] == b
            reg = col.registry
            for name in ("enabled", "threads", "dedupe_buffer_bytes", "io_max_bytes_per_second"):
                assert not [s for fam in reg.collect() for s in fam.samples
                            if s.name == f"kafka_compaction_broker_cleaner_{name}"], name
            [snap] = [s.snapshot for s in col.store.statuses() if s.kind == "admin"]
            threads = snap.cleaner_setting(b, "log.cleaner.threads")
            assert (threads.value, threads.source) == (None, "unknown") and "authoriz" in threads.reason.lower()
            assert t in snap.topics  # topic configs are another resource: still described
        finally:
            col.close()
