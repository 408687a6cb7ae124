"""The active segments' key sets against the broker's budget (``timeouts.active_segment_keys_budget_bytes``,
issue 43): what they hold is exported (``log_dir_active_keys_bytes``); a partition whose keys would take them
past the budget has its duplicates unknown with the reason ``over_budget`` and is counted
(``log_dir_active_keys_over_budget_partitions``), never a partial count; the others' counts are the same as
without a budget. Real segment files, the serving collector (headers first, then records)."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families

from collectors.app import build
from monitor.model.activekeys import KEY_BYTES
from monitor.settings.config import BrokerConfig, ClusterConfig, Config
from monitor.settings.configmodel import Timeouts
from recordfixtures import Rec, T0, v2, write

NS = "kafka_compaction_"
PARTITIONS, RECORDS, KEYS = 3, 400, 20


def _config(tmp_path, budget: int | None) -> Config:
    for p in range(PARTITIONS):
        recs = [Rec(o, T0 + o, f"k{o % KEYS}".encode(), None if o % 9 == 0 else b"v" * 200) for o in range(RECORDS)]
        write(tmp_path / f"orders-{p}" / "00000000000000000000.log", [v2(recs[i:i + 100]) for i in range(0, RECORDS, 100)])
    (tmp_path / "cleaner-offset-checkpoint").write_text(
        f"0\n{PARTITIONS}\n" + "".join(f"orders {p} 0\n" for p in range(PARTITIONS)))
    broker = BrokerConfig(id="1", log_dirs=(str(tmp_path),), io_budget_bytes_per_second=0)
    timeouts = Timeouts() if budget is None else Timeouts(active_segment_keys_budget_bytes=budget)
    return Config(clusters=(ClusterConfig(name="c", brokers=(broker,)),), timeouts=timeouts, granularity="partition")


def _page(tmp_path, budget: int | None) -> list:
    """Every sample of the page once the records are read (the second refresh: the first reads headers)."""
    col = build(_config(tmp_path, budget), headers_first=True)
    try:
        col.runner.refresh_all()
        col.runner.refresh_all()
        return [s for fam in text_string_to_metric_families(col.exposition().decode()) for s in fam.samples]
    finally:
        col.close()


def _by_partition(samples, name: str) -> dict:
    return {s.labels["partition"]: (s.value, s.labels.get("reason")) for s in samples if s.name == NS + name}


def _one(samples, name: str) -> float:
    (value,) = [s.value for s in samples if s.name == NS + name]
    return value


def test_within_the_default_budget_every_partitions_duplicates_are_counted(tmp_path):
    page = _page(tmp_path, None)
    assert _by_partition(page, "partition_detail_pending") == {str(p): (0.0, None) for p in range(PARTITIONS)}
    dups = _by_partition(page, "partition_active_segment_duplicate_records")
    assert dups == {str(p): (RECORDS - KEYS, None) for p in range(PARTITIONS)}
    assert _by_partition(page, "partition_active_segment_duplicates_unknown") == {}
    assert _one(page, "log_dir_active_keys_bytes") == PARTITIONS * KEYS * KEY_BYTES
    assert _one(page, "log_dir_active_keys_over_budget_partitions") == 0


def test_a_partition_over_the_budget_is_unknown_with_the_reason_and_counted(tmp_path):
    budget = (PARTITIONS - 1) * KEYS * KEY_BYTES + KEYS * KEY_BYTES // 2  # room for all but one partition's keys
    page = _page(tmp_path, budget)
    unknown = _by_partition(page, "partition_active_segment_duplicates_unknown")
    assert list(unknown.values()) == [(1.0, "over_budget")]
    dups = _by_partition(page, "partition_active_segment_duplicate_records")
    assert set(dups) | set(unknown) == {str(p) for p in range(PARTITIONS)} and not set(dups) & set(unknown)
    assert all(v == (RECORDS - KEYS, None) for v in dups.values())  # the others' counts are whole, as without a budget
    held = _one(page, "log_dir_active_keys_bytes")
    assert held == (PARTITIONS - 1) * KEYS * KEY_BYTES <= budget
    assert _one(page, "log_dir_active_keys_over_budget_partitions") == 1


def test_a_budget_smaller_than_one_segments_keys_stops_each_tally_there_and_holds_none(tmp_path):
    page = _page(tmp_path, KEYS * KEY_BYTES // 4)  # room for a quarter of one partition's keys: the tally stops there
    unknown = _by_partition(page, "partition_active_segment_duplicates_unknown")
    assert unknown == {str(p): (1.0, "over_budget") for p in range(PARTITIONS)}
    assert _by_partition(page, "partition_active_segment_duplicate_records") == {}
    assert _one(page, "log_dir_active_keys_bytes") == 0
    assert _one(page, "log_dir_active_keys_over_budget_partitions") == PARTITIONS
