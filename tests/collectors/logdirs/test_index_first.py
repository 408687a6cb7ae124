"""The first page from what Kafka keeps for itself (issue 43): a rolled segment below the producer snapshot is
summarised from its ``.index``/``.timeindex`` ends and two batch headers (monitor.model.summary.from_indexes),
its per-batch figures pending for the record pass; an index that cannot be trusted makes that segment be read
by its headers, said once and counted. On generated segments (tests/indexfixtures.py writes the indexes as
Kafka's LogSegment does): the compaction state equals a whole read's, field by field."""

from __future__ import annotations

import os
import shutil

import pytest

from collectors.logdirs.churn import Relister
from collectors.logdirs.read import PartitionReader, index_first_count
from indexfixtures import kafka_indexes, producer_snapshot
from monitor.kafka.logdir import scan_partition
from monitor.kafka.producer_snapshot import read_producer_snapshot
from monitor.kafka.segindex import DISAGREES, MISSING, NOT_TRIMMED, OLDER, TRUNCATED, TIME_ENTRY
from monitor.model.compaction import partition_state
from monitor.model.summary import from_indexes, read_detail, scan_headers, summarize
from monitor.model.topicconfig import effective_broker_setting, effective_config
from monitor.model.transactions import TRANSACTION_MAX_TIMEOUT
from recordfixtures import control, items, v2, write

CFG = effective_config("t", compacted=True).config
TXN = effective_broker_setting(TRANSACTION_MAX_TIMEOUT)
NOW_MS = 1_800_000_000_000
# what the page shows that the index-first read must give as a whole read does (per-batch counts are pending)
STATE_FIELDS = ("log_start_offset", "log_end_offset", "first_dirty_offset", "first_uncleanable_offset",
                "uncleanable_reason", "clean_bytes", "cleanable_bytes", "not_yet_cleanable_bytes", "log_bytes",
                "uncleaned_bytes", "uncleaned_ratio", "blocked_by", "last_stable_offset", "open_transactions",
                "cleanable_ratio", "cleanable_ratio_above_min", "compaction_delay_ms", "needs_compaction_now",
                "eligible", "segments", "active_segment_base_offset", "active_segment_bytes",
                "active_segment_first_timestamp", "first_dirty_timestamp", "dirty_largest_timestamp",
                "checkpoint_segment_base_offset")
SUMMARY_FIELDS = ("path", "base_offset", "size", "mtime_ns", "inode", "next_offset", "first_batch_max_timestamp",
                  "max_timestamp", "tail_position", "tail_crc")
PID = 4000
BASES = (0, 300, 600, 900)


def partition(root, ongoing=()):
    """Three rolled segments of thirty ~800-byte batches (index entries every 4 KB), a committed transaction
    in the second, an active segment; the snapshot at the active segment's base, as Kafka takes one at roll."""
    folder = root / "t-0"
    bases = BASES
    for base in bases[:-1]:
        batches = [v2(items(range(o, o + 10), distinct=6, tombstone_every=4)) for o in range(base, base + 290, 10)]
        if base == 300:
            batches[3] = v2(items(range(330, 340), distinct=6), producer_id=PID, producer_epoch=0,
                            transactional=True)
            batches[4] = control(340, "COMMIT", PID, 0, batches[3].records[-1].timestamp)
            batches[4:] = [batches[4], *(v2(items(range(o, o + 10), distinct=6)) for o in range(341, 591, 10))]
        log = write(folder / f"{base:020d}.log", batches).path
        kafka_indexes(log, base)
    write(folder / f"{bases[-1]:020d}.log", [v2(items(range(900, 905), distinct=6))])
    producer_snapshot(folder, bases[-1], ongoing)
    return folder


def read(reader, folder, checkpoint=300):
    part = scan_partition(folder)
    return reader.read(part, CFG, NOW_MS, checkpoint, 0, TXN)


def same_state(a, b):
    for name in STATE_FIELDS:
        assert getattr(a, name) == getattr(b, name), name


def test_a_summary_from_indexes_is_the_whole_reads_and_its_records_read_later_make_it_whole(tmp_path):
    folder = partition(tmp_path)
    for seg in scan_partition(folder).segments[:-1]:
        whole, _ = summarize(seg.log, seg.base_offset)
        s, read = from_indexes(seg.log, seg.base_offset)
        assert s.headers_pending and not s.detail_done and s.detail_pending_bytes == s.size
        for name in SUMMARY_FIELDS:
            assert getattr(s, name) == getattr(whole, name), name
        assert read < scan_headers(seg.log, seg.base_offset)[1] / 2  # a few pages, not one a batch
        done, _ = read_detail(s)
        assert done == whole and not done.headers_pending


def test_the_first_page_from_indexes_equals_a_whole_read_and_reads_less_than_the_header_pass(tmp_path):
    folder = partition(tmp_path)
    bare = tmp_path / "bare"
    shutil.copytree(folder, bare / "t-0")
    for f in (bare / "t-0").glob("*.snapshot"):
        f.unlink()  # no snapshot: every segment by its headers
    whole = read(PartitionReader(Relister()), folder)
    first = PartitionReader(Relister(), headers_first=True)
    got = read(first, folder)
    headers = PartitionReader(Relister(), headers_first=True)
    read(headers, bare / "t-0")
    assert [s.headers_pending for s in got[0]] == [True, True, True, False]
    same_state(got[2], whole[2])
    assert got[4] == whole[4] == [] and not first.untrusted
    assert 0 < first.header_bytes < headers.header_bytes
    assert got[2].delete_horizon_records["marker"] is None  # the COMMIT marker: pending, not 0
    for s in got[0]:
        first.detail(s.path)
    again = read(first, folder)
    assert [s.headers_pending for s in again[0]] == [False] * 4
    assert again[2] == whole[2]  # the record pass done: every field a whole read's


def lower_time_index(log):
    """A time index whose last timestamp is older than the segment's batches (written by no broker)."""
    p = log.with_suffix(".timeindex")
    data = p.read_bytes()
    ts, rel = TIME_ENTRY.unpack(data[-12:])
    p.write_bytes(data[:-12] + TIME_ENTRY.pack(ts - 1000, rel))
    os.utime(p, ns=(os.stat(log).st_atime_ns, os.stat(log).st_mtime_ns + 1))


def missing(log):
    log.with_suffix(".index").unlink()


def truncated(log):
    p = log.with_suffix(".index")
    p.write_bytes(p.read_bytes()[:-5])
    os.utime(p, ns=(os.stat(log).st_atime_ns, os.stat(log).st_mtime_ns + 1))


def not_trimmed(log):
    p = log.with_suffix(".timeindex")
    with open(p, "ab") as fh:
        fh.truncate(10 * 1024 * 1024 // 12 * 12)
    os.utime(p, ns=(os.stat(log).st_atime_ns, os.stat(log).st_mtime_ns + 1))


def older(log):
    st = os.stat(log)
    os.utime(log.with_suffix(".index"), ns=(st.st_atime_ns, st.st_mtime_ns - 10**9))


@pytest.mark.parametrize("damage, code", [(missing, MISSING), (truncated, TRUNCATED), (not_trimmed, NOT_TRIMMED),
                                          (older, OLDER), (lower_time_index, DISAGREES)])
def test_a_segment_whose_index_cannot_be_trusted_is_read_by_headers_said_once_and_counted(tmp_path, damage, code):
    folder = partition(tmp_path)
    log = folder / f"{300:020d}.log"
    damage(log)
    said = []
    reader = PartitionReader(Relister(), headers_first=True, notify=said.append)
    got = read(reader, folder)
    assert [s.headers_pending for s in got[0]] == [True, False, True, False]
    assert reader.untrusted == {str(log): code}
    assert len(said) == 1 and f"({code})" in said[0] and str(log)[:-len(".log")] in said[0]
    same_state(got[2], read(PartitionReader(Relister()), folder)[2])  # never a wrong ratio
    read(reader, folder)
    assert len(said) == 1 and len(reader.untrusted) == 1  # said once while it lasts, still counted


def test_segments_from_a_transaction_the_snapshot_says_is_ongoing_keep_the_header_pass(tmp_path):
    folder = partition(tmp_path, ongoing=((PID + 1, 450),))
    snap = read_producer_snapshot(next(folder.glob("*.snapshot")))
    assert index_first_count(BASES, snap) == 1  # the segment holding offset 450 and on: headers
    assert index_first_count(BASES, None) == 0  # no snapshot: nothing from indexes
    got = read(PartitionReader(Relister(), headers_first=True), folder)
    assert [s.headers_pending for s in got[0]] == [True, False, False, False]


def test_a_segment_of_few_index_entries_is_read_by_its_headers_which_cost_less(tmp_path):
    """Fewer .index entries than INDEX_FIRST_MIN_ENTRIES: the header pass reads no more pages than the indexes
    and two headers would (each entry is a batch a page apart from the last); nothing read, nothing refused."""
    log = write(tmp_path / f"{0:020d}.log", [v2(items(range(0, 3))), v2(items(range(3, 6)))]).path
    index, _ = kafka_indexes(log, 0)
    assert index.read_bytes() == b""  # below index.interval.bytes: no entry
    assert from_indexes(log, 0) == (None, 0)
    folder = tmp_path / "t-0"
    folder.mkdir()
    for i, base in enumerate((0, 100)):
        write(folder / f"{base:020d}.log", [v2(items(range(base + j * 10, base + j * 10 + 10))) for j in range(i + 1)])
    kafka_indexes(folder / f"{0:020d}.log", 0)
    producer_snapshot(folder, 100)
    reader = PartitionReader(Relister(), headers_first=True, notify=print)
    got = read(reader, folder, checkpoint=0)
    assert [s.headers_pending for s in got[0]] == [False, False] and reader.untrusted == {}


def test_the_serving_collector_counts_the_untrusted_segments_and_names_each_once(tmp_path, caplog):
    from prometheus_client.parser import text_string_to_metric_families

    from collectors.app import build
    from monitor.settings.config import BrokerConfig, ClusterConfig, Config

    for p in (0, 1):
        shutil.move(partition(tmp_path / f"x{p}"), tmp_path / f"t-{p}")
    missing(tmp_path / "t-1" / f"{300:020d}.log")
    (tmp_path / "cleaner-offset-checkpoint").write_text("0\n2\nt 0 300\nt 1 300\n")
    broker = BrokerConfig(id="1", log_dirs=(str(tmp_path),), io_budget_bytes_per_second=0)
    col = build(Config(clusters=(ClusterConfig(name="c", brokers=(broker,)),), granularity="partition"),
                headers_first=True)
    try:
        col.runner.refresh_all()
        col.runner.refresh_all()
        page = [s for fam in text_string_to_metric_families(col.exposition().decode()) for s in fam.samples]
    finally:
        col.close()
    (count,) = [s.value for s in page if s.name == "kafka_compaction_log_dir_index_untrusted_segments"]
    ratios = {s.labels["partition"]: s.value for s in page if s.name == "kafka_compaction_partition_cleanable_ratio"}
    assert count == 1 and ratios["0"] == ratios["1"] > 0  # the same partition either way: never a wrong ratio
    said = [r.getMessage() for r in caplog.records if "index not used" in r.getMessage()]
    assert len(said) == 1 and "t-1" in said[0] and "(missing)" in said[0]


def test_the_record_pass_over_a_segment_from_its_indexes_stops_and_resumes_the_page_figures_kept(tmp_path):
    """Stopped within the segment (the refresh's slice ran out), the figures the page shows are still the
    indexes' and its transactions are left out of the fold; read on, it is the whole read's."""
    folder = partition(tmp_path)
    seg = scan_partition(folder).segments[1]  # the one holding a committed transaction
    whole, _ = summarize(seg.log, seg.base_offset)
    s, _ = from_indexes(seg.log, seg.base_offset)
    shown = {name: getattr(s, name) for name in SUMMARY_FIELDS}
    calls = []
    s, read = read_detail(s, stop=lambda: len(calls.append(1) or calls) >= 4)
    assert s.headers_pending and 0 < s.detail_position < s.size and read < s.size
    assert {name: getattr(s, name) for name in SUMMARY_FIELDS} == shown
    assert s.txn_runs  # the transaction's data read, its COMMIT not yet: left out of the fold while pending
    others = [summarize(x.log, x.base_offset)[0] for x in scan_partition(folder).segments]
    pending = partition_state("t", 0, [others[0], s, *others[2:]], CFG, NOW_MS, checkpoint=0, log_start_offset=0)
    assert pending.open_transactions == () and pending.last_stable_offset == pending.log_end_offset
    s, _ = read_detail(s)
    assert s == whole
