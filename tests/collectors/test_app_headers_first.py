"""``collect`` serving reads log dirs headers first (``collectors.app.build(headers_first=True)``, what
``run_collect`` builds unless ``--once``): the first page has the partition's ratio and cause, says its
records are pending and has no tombstone series; the next has them, pending 0, with the bytes each pass read
and the budget. ``build()`` as ``collect --once`` reads whole: no pending series at all."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families

from collectors.app import build
from monitor.settings.config import BrokerConfig, ClusterConfig, Config
from recordfixtures import Rec, T0, v2, write

NS = "kafka_compaction_"


def _samples(col) -> dict:
    out = {}
    for fam in text_string_to_metric_families(col.exposition().decode()):
        for s in fam.samples:
            out[(s.name, s.labels.get("section") or s.labels.get("pass"))] = s.value
    return out


def _config(tmp_path) -> Config:
    recs = [Rec(o, T0 + o, f"k{o % 20}".encode(), None if o % 9 == 0 else b"v" * 200) for o in range(400)]
    write(tmp_path / "orders-0" / "00000000000000000000.log", [v2(recs[i:i + 100]) for i in range(0, 400, 100)])
    (tmp_path / "cleaner-offset-checkpoint").write_text("0\n1\norders 0 0\n")
    broker = BrokerConfig(id="1", log_dirs=(str(tmp_path),), io_budget_bytes_per_second=0)
    return Config(clusters=(ClusterConfig(name="c", brokers=(broker,)),))


def test_serving_pages_headers_first_then_records(tmp_path):
    col = build(_config(tmp_path), headers_first=True)
    try:
        col.runner.refresh_all()
        first = _samples(col)
        assert (NS + "partition_cleanable_ratio", None) in first and (NS + "partition_compaction_cause", None) in first
        assert first[(NS + "partition_detail_pending", None)] == 1.0
        assert (NS + "partition_tombstones", "dirty") not in first
        assert (NS + "topic_tombstones", None) not in first
        assert first[(NS + "log_dir_read_bytes_total", "detail")] == 0
        assert first[(NS + "log_dir_detail_pending_bytes", None)] > 0
        assert (NS + "log_dir_io_budget_bytes_per_second", None) not in first  # 0: unlimited
        col.runner.refresh_all()
        second = _samples(col)
        assert second[(NS + "partition_detail_pending", None)] == 0.0
        assert second[(NS + "partition_tombstones", "dirty")] == 45
        assert second[(NS + "log_dir_detail_pending_bytes", None)] == 0
        assert second[(NS + "log_dir_read_bytes_total", "detail")] == first[(NS + "log_dir_detail_pending_bytes", None)]
        # a partition once read whole stays whole: a new segment (a roll, the cleaner's swap) is read at once
        recs = [Rec(o, T0 + o, f"k{o % 20}".encode(), None) for o in range(400, 410)]
        write(tmp_path / "orders-0" / "00000000000000000400.log", [v2(recs)])
        col.runner.refresh_all()
        third = _samples(col)
        assert third[(NS + "partition_detail_pending", None)] == 0.0
        assert third[(NS + "log_dir_detail_pending_bytes", None)] == 0
        assert third[(NS + "partition_tombstones", "dirty")] == 45 + 10
    finally:
        col.close()


def test_once_reads_whole_and_has_no_pending_series(tmp_path):
    col = build(_config(tmp_path))
    try:
        col.runner.refresh_all()
        page = _samples(col)
        assert page[(NS + "partition_tombstones", "dirty")] == 45
        assert not [k for k in page if "pending" in k[0] or "read_bytes" in k[0]]
    finally:
        col.close()
