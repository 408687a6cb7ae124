"""The Audit page says where each topic's config came from (#22 on the page): a real audit (local Spark)
of two topics' segments, one whose config the admin API gave and one it refused, as
``compaction-monitor audit`` passes them (``spark_analysis.job.run``'s admin arguments). The refused
topic is listed with the refusal, and its null figures stay null (unknown), never 0."""

from __future__ import annotations

import json
import shutil

import pyarrow.parquet as pq
import pytest

from collectors.admin.state import AdminSnapshot
from dashpages import page
from monitor.contract import units
from monitor.contract.auditrun import CONFIG_UNKNOWN_NOTE, MARKER, SUMMARY, marker_text
from monitor.model.topicconfig import ADMIN, UNKNOWN, TopicConfig
from recordfixtures import three_v2_batches

pytestmark = pytest.mark.slow  # one real Spark audit

BLIND = "refused: no DescribeConfigs on TOPIC accounts for User:blind (TOPIC_AUTHORIZATION_FAILED)"


@pytest.fixture(scope="module")
def audited(_spark_sessions, tmp_path_factory):
    spark = _spark_sessions.get(kafka_source=False)
    from spark_analysis.job import build_parser, run

    tmp = tmp_path_factory.mktemp("config-page")
    three_v2_batches(tmp / "logs" / "orders-0" / "00000000000000000000.log")
    shutil.copytree(tmp / "logs" / "orders-0", tmp / "logs" / "accounts-0")
    snap = AdminSnapshot(0.0, refused={"accounts": BLIND}, listed=frozenset({"orders", "accounts"}),
                         principal="User:blind")
    given = {"orders": TopicConfig.from_strings({"cleanup.policy": "compact", "delete.retention.ms": 60000})}
    base, _ = run(build_parser().parse_args(["--input", str(tmp / "logs"), "--out", str(tmp / "out")]),
                  spark=spark, topic_configs=given, admin_asked=True, admin=snap)
    return tmp / "out", base


def test_the_topic_table_says_where_each_config_came_from_and_why_one_is_unknown(audited, monkeypatch):
    out, base = audited
    written = {t["topic"]: t for t in pq.read_table(f"{base}/topics").to_pylist()}
    at = page("audit", monkeypatch, audit_dir=out)
    assert "Per topic" in [h.value for h in at.subheader]
    assert [w.value for w in at.warning] == [f"Topic config unknown for 1 topic(s): {CONFIG_UNKNOWN_NOTE}."]
    why = next(d.value for d in at.dataframe if "Why its config is unknown" in d.value.columns)
    [row] = why.to_dict("records")
    assert row["Topic"] == "accounts" and row["Why its config is unknown"].endswith(f"unknown: {BLIND}")
    assert "delete.retention.ms" in row["Why its config is unknown"]  # the keys the refusal left unknown

    table = next(d.value for d in at.dataframe if "Config from" in d.value.columns)
    shown = {r["Topic"]: r for r in table.to_dict("records")}
    assert shown["orders"]["Config from"] == ADMIN and shown["accounts"]["Config from"] == UNKNOWN
    # what depends on no config is shown for both; what depends on the refused one is unknown, not 0
    records = next(d.value for d in at.table if "Records" in d.value.columns).set_index("Topic")["Records"]
    assert records["accounts"] == records["orders"] == "6"
    assert written["orders"]["reclaimable_bytes"] is not None and written["accounts"]["reclaimable_bytes"] is None
    assert shown["orders"]["Next clean reclaims"] == units.bytes_iec(written["orders"]["reclaimable_bytes"])
    assert shown["accounts"]["Next clean reclaims"] == "unknown"
    # and the conclusions name it among the partitions that need attention, with why
    assert "Config unknown: accounts-0" in at.markdown[0].value


def test_a_run_whose_configs_are_all_known_lists_none(audited, tmp_path, monkeypatch):
    """The same run with the refusal gone from its summary: no warning, no list (the page reads the
    summary's topic_configs, as the HTML report does)."""
    out, base = audited
    run = tmp_path / "audits" / "run-20990101T000000Z"
    shutil.copytree(base, run)
    summary = json.loads((run / SUMMARY).read_text())
    summary["topic_configs"] = {t: {**c, "unknown": [], "reason": None} for t, c in summary["topic_configs"].items()}
    (run / SUMMARY).write_text(json.dumps(summary))
    files = {str(f.relative_to(run)): f.stat().st_size for f in run.rglob("*") if f.is_file() and f != run / MARKER}
    (run / MARKER).write_text(marker_text(run.name, 0, files))
    at = page("audit", monkeypatch, audit_dir=run.parent)
    assert not at.warning and not at.error
    assert not any("Why its config is unknown" in d.value.columns for d in at.dataframe)
    assert "Per topic" in [h.value for h in at.subheader]
