"""The record pass on a thread of its own (issue 43, item 4: ``collectors.logdirs.detail.RecordReader``): it
holds its budget within 10% on an injected clock while refreshes take the lock for their header work; a
refresh that comes during a record read sees each summary as a whole batch left it, never half-folded; the
thread ends at ``stop`` (the scanner's and the runner's), no thread left behind."""

from __future__ import annotations

import threading

import pytest

from collectors.logdirs import detail as detail_mod
from collectors.logdirs.detail import RecordReader
from collectors.logdirs.scanner import LogDirScanner
from fakeclock import FakeClock
from monitor.fileio import iobudget
from monitor.fileio.iobudget import BURST_SECONDS, IoBudget
from recordfixtures import Rec, T0, v2, write
from waiting import wait_for


class FakeSegments:
    """``PartitionReader``'s side of the record pass: each segment ``size`` bytes in ``batch``-byte batches,
    each batch charged through ``take`` and taking ``per_batch`` seconds of the fake clock to read."""

    def __init__(self, budget, clock, sizes: dict, batch: int = 16_384, per_batch: float = 0.0001):
        self.budget, self.clock, self.left, self.batch, self.per_batch = budget, clock, dict(sizes), batch, per_batch
        self.read = 0

    def detail(self, path, stop=None, take=None):
        while self.left.get(path, 0) > 0:
            n = min(self.batch, self.left[path])
            self.left[path] -= n
            self.clock.now += self.per_batch
            self.read += n
            take(n)
            if stop is not None and stop():
                break
        return self.left.get(path, 0) == 0


def _held_ratio(header_seconds: float, seconds: float = 300.0, interval: float = 10.0):
    """The budget's rate held by the record pass over ``seconds`` of the fake clock, a refresh every
    ``interval`` holding the lock for ``header_seconds`` (charging 100 KB of headers); (ratio, the largest
    excess over rate * t seen at any moment, in bytes)."""
    clock, rate = FakeClock(), 1_000_000
    budget = IoBudget(rate, clock=clock, sleep=clock.sleep)
    segs = FakeSegments(budget, clock, {f"s{i}": 50_000_000 for i in range(20)})
    rr = RecordReader(segs, threading.Lock(), sleep=clock.sleep)
    with rr.header_turn():
        rr.hand_over([(3, ("t", 0), list(segs.left))])
    next_refresh, excess = interval, 0.0
    while clock.now < seconds:
        if clock.now >= next_refresh:  # the refresh's header half: the lock held, little read
            with rr.header_turn():
                budget.charge(100_000)
                clock.now += header_seconds
            next_refresh += interval
        wait = rr.turn()
        assert wait is not None  # far more to read than the window holds
        excess = max(excess, budget.bytes_total - rate * clock.now)
        clock.sleep(min(wait, max(next_refresh - clock.now, 0.0)) if wait else 0.0)
    return budget.bytes_total / clock.now / rate, excess


def test_the_record_pass_holds_its_budget_while_refreshes_take_the_lock():
    ratio, excess = _held_ratio(header_seconds=4.0)
    assert ratio == pytest.approx(1.0, abs=0.1)
    # never ahead of the bucket beyond the bounded burst a yield may keep (and one batch)
    assert excess <= 1_000_000 * iobudget.YIELD_BURST_SECONDS + 16_384
    assert _held_ratio(header_seconds=0.0)[0] == pytest.approx(1.0, abs=0.1)


def test_without_the_tokens_kept_through_a_yield_the_budget_is_not_held(monkeypatch):
    """What the yield's kept tokens are for: with the usual one-second burst only, the time a refresh holds
    the lock is lost to the budget (4 s of every 10: about 0.6 of it held)."""
    monkeypatch.setattr(iobudget, "YIELD_BURST_SECONDS", BURST_SECONDS)
    ratio, _ = _held_ratio(header_seconds=4.0)
    assert ratio < 0.9


def test_credit_kept_through_a_yield_is_dropped_when_nothing_waits():
    clock = FakeClock()
    budget = IoBudget(1000, clock=clock, sleep=clock.sleep)
    segs = FakeSegments(budget, clock, {"a": 100}, batch=100)
    rr = RecordReader(segs, threading.Lock(), sleep=clock.sleep)
    with rr.header_turn():
        rr.hand_over([(0, ("t", 0), ["a"])])
    with rr.header_turn():
        clock.now += 30  # a long header half with records waiting: 30 s of tokens kept
    assert budget.debt_seconds() == 0.0 and budget._tokens == 1000 + 30_000  # the burst and the 30 s
    assert rr.turn() is None and segs.read == 100 and rr.drained
    assert rr.turn() is None  # nothing left: the credit goes, back to the usual burst
    budget.charge(1000)
    assert budget.debt_seconds() == 0.0
    budget.charge(1)
    assert budget.debt_seconds() > 0


def test_a_segment_replaced_under_the_reader_is_left_for_the_header_pass():
    """``detail`` not whole and not stopped (the file replaced or shrunk since its headers were read): the
    turn goes on to the next segment, never round the same one."""
    clock = FakeClock()
    budget = IoBudget(None, clock=clock, sleep=clock.sleep)

    class Replaced(FakeSegments):
        def detail(self, path, stop=None, take=None):
            return False if path == "gone" else super().detail(path, stop, take)

    segs = Replaced(budget, clock, {"b": 1000})
    rr = RecordReader(segs, threading.Lock(), sleep=clock.sleep)
    with rr.header_turn():
        rr.hand_over([(0, ("t", 0), ["gone", "b"])])
    assert rr.turn() is None and segs.read == 1000


# a real log dir: one partition, one segment of 4 batches of 100 records, a tombstone every 9th offset


def _log_dir(tmp_path):
    recs = [Rec(o, T0 + o, f"k{o % 20}".encode(), None if o % 9 == 0 else b"v" * 200) for o in range(400)]
    write(tmp_path / "orders-0" / "00000000000000000000.log", [v2(recs[i:i + 100]) for i in range(0, 400, 100)])
    (tmp_path / "cleaner-offset-checkpoint").write_text("0\n1\norders 0 0\n")
    return tmp_path


def _report(snap):
    (r,) = snap.partitions
    return r


def _records_threads():
    return [t for t in threading.enumerate() if t.name.startswith("records")]


def test_a_refresh_during_a_record_read_sees_the_summary_a_whole_batch_left(tmp_path):
    """The reader is held inside its second batch's charge until a refresh has announced itself; the refresh
    then sees the segment's summary as two whole batches left it (position and tombstones agree), its
    partition still pending; the reader reads on after it, and the next refresh has every record."""
    seen = []
    scanner_box = []

    def txn_timeout():  # called once per refresh, under the scanner's lock: what the refresh sees of the summary
        for s in scanner_box[0]._reader._cache.values():
            seen.append((s.detail_position, s.tombstones, s.detail_done))
        from monitor.model.topicconfig import effective_broker_setting
        from monitor.model.transactions import TRANSACTION_MAX_TIMEOUT
        return effective_broker_setting(TRANSACTION_MAX_TIMEOUT)

    charged = []
    second = threading.Event()

    class Hooked(IoBudget):
        def charge(self, n):
            super().charge(n)
            if threading.current_thread().name.startswith("records"):
                charged.append(n)
                if len(charged) == 2:  # inside the second batch's charge: let a refresh come and wait
                    second.set()
                    # the scanner's reader, not the test's ``rr``: this thread may get here before start_records returns
                    wait_for(lambda: scanner_box[0]._records._wanted > 0, timeout=30,
                             what="the refresh to ask for the lock")

    budget = Hooked(None)
    scanner = LogDirScanner([_log_dir(tmp_path)], headers_first=True, io_budget=budget,
                            transaction_max_timeout=txn_timeout)
    scanner_box.append(scanner)
    first = scanner.refresh()
    assert _report(first).detail_pending and seen == []
    scanner.start_records()
    rr = scanner._records
    try:
        assert second.wait(30)
        got = {}
        t = threading.Thread(target=lambda: got.setdefault("snap", scanner.refresh()))
        t.start()
        t.join(60)
        position, tombstones, done = seen[-1]
        assert position == sum(charged[:2]) and not done  # two whole batches
        assert tombstones == len([o for o in range(200) if o % 9 == 0])  # ... and their tombstones, no more
        assert _report(got["snap"]).detail_pending
        wait_for(lambda: not rr.pending() and scanner.busy(), timeout=30, what="the record pass to end")
        last = _report(scanner.refresh())
        assert not last.detail_pending and seen[-1][1] == len([o for o in range(400) if o % 9 == 0])
        assert not scanner.busy()  # the page has it: the interval again
    finally:
        scanner.stop_records()
    assert not rr.running() and _records_threads() == []


def test_the_runner_starts_the_record_pass_and_its_stop_joins_it(tmp_path):
    """Serving (``collectors.app.build(headers_first=True)``, the runner started): the records come on the page
    without a refresh reading them, and ``close`` (the runner's stop) leaves no record thread behind; the
    one-shot ``refresh_all`` never starts one."""
    from collectors.app import build
    from monitor.settings.config import BrokerConfig, ClusterConfig, Config

    d = _log_dir(tmp_path)
    config = Config(clusters=(ClusterConfig(name="c", brokers=(BrokerConfig(id="1", log_dirs=(str(d),)),)),))
    once = build(config, headers_first=True)
    try:
        once.runner.refresh_all()
        assert _records_threads() == []
    finally:
        once.close()
    col = build(config, headers_first=True)
    try:
        col.runner.start()
        wait_for(lambda: b'kafka_compaction_partition_tombstones{' in col.exposition(), timeout=60,
                 what="the records on the page")
        assert len(_records_threads()) == 1
    finally:
        col.close()
    assert _records_threads() == []


def test_stop_is_not_held_up_by_a_refresh_holding_the_lock():
    """The reader waiting for the lock a long refresh holds still ends at ``stop`` (the collector's shutdown
    is not a refresh long)."""
    inner, trying = threading.Lock(), threading.Event()

    class Watched:  # the scanner's lock, telling when the reader tries it
        def acquire(self, timeout=-1):
            if threading.current_thread().name == "records":
                trying.set()
            return inner.acquire(timeout=timeout)

        def release(self):
            inner.release()

    clock = FakeClock()
    budget = IoBudget(None, clock=clock, sleep=clock.sleep)
    rr = RecordReader(FakeSegments(budget, clock, {"a": 10 ** 9}), Watched())
    rr.hand_over([(0, ("t", 0), ["a"])])
    inner.acquire()  # a refresh's pass, as far as the reader can tell (not announced: it tries the lock)
    try:
        rr.start()
        assert trying.wait(30)
        rr.stop(timeout=30)
        assert not rr.running()
    finally:
        inner.release()
