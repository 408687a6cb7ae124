"""Tombstones and transaction markers per delete-horizon state (KIP-534) against the real broker: one
compacted topic with tombstones, a committed and an aborted transaction, cleaned once (the clean stamps
what it keeps), then more tombstones and a commit it has not cleaned. The states the model reports
(``monitor.model.horizoncount``), the collector's series, ``logdir``/``explain`` and the dashboard's
tombstone page all agree with kafka-dump-log's ``deleteHorizonMs`` on the same files. One topic, cleaned
once, shared by the module's tests; delete.retention.ms is a day (Kafka's default) so no horizon passes
while they run, and "passed" is shown by judging the same files at a later now."""

from __future__ import annotations

import io
import json
import shutil
import time
from pathlib import Path

import pytest

from monitor.contract import units
from prometheus_client import generate_latest

from cli.explain_cmd import run_explain
from cli.logdir_cmd import run_logdir
from collecting import make_collector, pval, refresh
from dashpages import page
from dumpcompare import dump
from faultserver import FaultServer
from kafkatools import (compacted, copy_partition, create_topic, partition_dir, produce, set_topic_config,
                        transactional_producer, unique_topic, wait_cleaned_up_to_active, write_rounds)
from monitor.kafka.record import SegmentReader
from monitor.model import horizon as hz
from monitor.model.compaction import partition_state
from monitor.model.summary import summarize
from monitor.model.topicconfig import TopicConfig
from monitor.settings.config import Config
from monitor.contract.units import timestamp_utc as utc
from waiting import wait_for

pytestmark = pytest.mark.kafka
DAY = 86_400_000  # delete.retention.ms: Kafka's default, so a command without the topic's config agrees
MARKERS = ("COMMIT", "ABORT")


def _txn(p, topic: str, keys, commit: bool) -> None:
    p.begin_transaction()
    for k in keys:
        p.produce(topic, key=k.encode(), value=b"v" * 40, partition=0)
    p.flush(30)
    (p.commit_transaction if commit else p.abort_transaction)(30)


@pytest.fixture(scope="module")
def cleaned(kafka, tmp_path_factory):
    """The topic after one clean and the writes after it; a copy of its log dir (its segments and the
    cleaner's checkpoint: nothing of other tests), and kafka-dump-log's batches of that copy."""
    b = kafka.bootstrap
    t = create_topic(b, unique_topic("horizons"), **compacted(**{"min.cleanable.dirty.ratio": 1.0,
                                                                  "delete.retention.ms": DAY}))
    p = transactional_producer(b, f"{t}-txn")
    write_rounds(b, t, 1, keys=60)
    _txn(p, t, [f"k{i}" for i in range(60, 70)], commit=True)
    _txn(p, t, [f"gone{i}" for i in range(10)], commit=False)
    write_rounds(b, t, 0, keys=0, tombstones=range(0, 30, 3))  # ten tombstones, rolled
    set_topic_config(b, t, min_cleanable_dirty_ratio=0.01)
    wait_cleaned_up_to_active(kafka.log_dir, t)
    set_topic_config(b, t, min_cleanable_dirty_ratio=1.0)  # no second clean: what follows stays unstamped
    produce(b, t, [(f"k{i}".encode(), None) for i in range(40, 44)])
    _txn(p, t, ["k50"], commit=True)
    p.flush(30)
    # the coordinator writes the COMMIT marker after EndTxn returns: copy once it is on disk, or the copy
    # and the live log dir the collector reads would disagree by one marker on a loaded machine
    wait_for(lambda: _markers(partition_dir(kafka.log_dir, t)) >= 3, 60, "the third transaction marker on disk")
    root = tmp_path_factory.mktemp("horizons")
    copy = copy_partition(partition_dir(kafka.log_dir, t), root / "logdir")
    shutil.copy(Path(kafka.log_dir) / "cleaner-offset-checkpoint", root / "logdir")
    _, batches = dump(sorted(copy.glob("*.log")))
    return t, copy, batches


def _markers(folder: Path) -> int:
    """COMMIT/ABORT marker batches in the partition's segments, by their headers."""
    n = 0
    for f in sorted(Path(folder).glob("*.log")):
        n += sum(1 for b in SegmentReader(f, skip_corrupt=True).batches(bodies=False) if b.is_control)
    return n


def from_dump(batches, now_ms: int) -> dict:
    """Tombstones and COMMIT/ABORT markers per state, from kafka-dump-log's deleteHorizonMs."""
    out = {k: dict.fromkeys(hz.STATES, 0) for k in ("tombstone", "marker")}
    for b in batches:
        st = hz.state(b.delete_horizon_ms if b.has_delete_horizon else None, now_ms)
        for r in b.records():
            if b.is_control and r.control_type in MARKERS:
                out["marker"][st] += 1
            elif not b.is_control and r.value_size < 0:
                out["tombstone"][st] += 1
    return out


def pending_horizons(batches, now_ms: int) -> list[int]:
    return [b.delete_horizon_ms for b in batches if b.has_delete_horizon and b.delete_horizon_ms > now_ms]


def model(copy: Path, now_ms: int):
    summaries = [summarize(f, int(f.name[:-4]))[0] for f in sorted(copy.glob("*.log"))]
    return partition_state(copy.name.rsplit("-", 1)[0], 0, summaries,
                           TopicConfig(cleanup_policy=("compact",), delete_retention_ms=DAY), now_ms)


def test_states_agree_with_kafka_dump_log_now_and_past_the_horizons(cleaned):
    t, copy, batches = cleaned
    now = int(time.time() * 1000)
    st = model(copy, now)
    expected = from_dump(batches, now)
    assert st.delete_horizon_records == expected
    # the clean stamped the ten tombstones it kept; the four written after it are unstamped; markers both
    assert expected["tombstone"] == {"unstamped": 4, "pending": 10, "passed": 0}
    assert expected["marker"]["unstamped"] >= 1 and sum(expected["marker"].values()) >= 3
    assert st.next_delete_horizon_ms == min(pending_horizons(batches, now)) and st.horizon_faults == ()
    later = max(pending_horizons(batches, now)) + 1  # the same files judged once every horizon has passed
    st = model(copy, later)
    assert st.delete_horizon_records == from_dump(batches, later)
    assert st.tombstones_past_delete_horizon == 10 == st.delete_horizon_records["tombstone"]["passed"]


def test_the_exported_series_and_the_tombstone_page_agree(kafka, cleaned, monkeypatch):
    t, _, batches = cleaned
    col = make_collector(kafka)
    try:
        reg = refresh(col)
        now = int(time.time() * 1000)
        expected = from_dump(batches, now)
        got = {k: {s: pval(reg, "kafka_compaction_partition_delete_horizon_records", t, kind=k, state=s)
                   for s in hz.STATES} for k in expected}
        assert got == expected
        assert pval(reg, "kafka_compaction_partition_next_delete_horizon_timestamp_seconds", t) \
            == min(pending_horizons(batches, now)) / 1000
        assert pval(reg, "kafka_compaction_partition_tombstones_past_delete_horizon", t) == 0
        exposition = generate_latest(reg)
    finally:
        col.close()
    # the dashboard's tombstone page from that page of the collector: the partition's row and the chart
    server = FaultServer(ok_body=exposition)
    try:
        at = page("tombstones", monkeypatch, collector_url=server.url)
    finally:
        server.close()
    tables = [d.value for d in at.dataframe if "Tombstones pending" in d.value.columns]
    assert len(tables) == 1
    row = tables[0][tables[0]["Topic"] == t].iloc[0]  # text of the units formatter, labels in words
    assert (row["Tombstones unstamped"], row["Tombstones pending"], row["Tombstones passed"]) == ("4", "10", "0")
    assert row["Next removal (UTC)"] == units.timestamp_utc(min(pending_horizons(batches, now)))


def test_logdir_and_explain_say_it_in_words(cleaned):
    t, copy, batches = cleaned
    out, err = io.StringIO(), io.StringIO()
    assert run_logdir([copy.parent], config=Config(), out=out, err=err) == 0, err.getvalue()
    now = int(time.time() * 1000)
    first = min(pending_horizons(batches, now))
    tombs = min(pending_horizons([b for b in batches if not b.is_control], now))
    line = next(x for x in out.getvalue().splitlines() if x.startswith(f"horizons: {t}-0: "))
    assert ("tombstones: 4 never stamped (the next clean that keeps them stamps them; removable 1 d after it), "
            f"10 stamped, the first removable from {utc(tombs)}") in line
    assert "; markers: " in line and "past" not in line
    out = io.StringIO()
    assert run_explain([t], config=Config(), log_dirs=[copy.parent], fmt="json", out=out, err=err) == 0
    [c] = json.loads(out.getvalue())
    ev = c["evidence"]["delete_horizons"]
    assert ev["records"] == from_dump(batches, now) and ev["next_removal_ms"] == first
    assert "tombstones_past_horizon" not in c["evidence"]
