"""The partitions area's render costs what changed (issue 43): a partition whose report, cause and thresholds are
the same as at the last render keeps what was made from them (``collectors.export.partitions._Kept``), and only
what moves with the clock (``partitions.CLOCK``) and its place in the queue are made again. What goes out must be
exactly the page a render from scratch makes: compared byte for byte here over a clock that crosses
min.compaction.lag.ms, max.compaction.lag.ms and delete.retention.ms, with one partition written now and then (a
clock figure kept from an earlier render, or a health verdict kept past a threshold, differs and fails). The
partitions made again are counted (``PartitionCollector.rendered``), never timed."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry
from prometheus_client.exposition import choose_encoder

from collectors.export import metrics as M
from collectors.export.encoding import fast
from collectors.export.facts import CauseCache, from_statuses, log_dir_facts
from collectors.export.partitions import (CLOCK, QUEUE, SPLIT, PartitionCollector, _add_lines, _clock_rows,
                                          _partition_rows, _per_partition, _queue_rows, _steady_rows)
from collectors.export.view import EXTRA, View, line_family
from collectors.logdirs.scanner import LogDirScanner
from collectors.serving.runner import Store
from monitor.contract.sourcekinds import LOG_DIRS
from monitor.model.cleanerio import IoRate
from monitor.model.topicconfig import BrokerSetting, effective_config
from monitor.settings.config import Thresholds
from monitor.verdicts.facts import BrokerFacts
from monitor.verdicts.fixes import IO_MAX
from monitor.verdicts.health import SETTLED, series_fire
from recordfixtures import T0, items, v2

MINUTE = 60_000
SOURCE = "logdirs:c:1"
CONFIGS = {"min.compaction.lag.ms": 12 * MINUTE, "max.compaction.lag.ms": 70 * MINUTE,
           "delete.retention.ms": 25 * MINUTE}


def _log_dir(root: Path, partitions: int) -> Path:
    """``partitions`` partitions of ``orders``, each 3 segments of 10 records a minute apart (a tombstone every
    3rd); the cleaner's checkpoint at 10 for the even ones (two dirty segments: held by min.compaction.lag.ms,
    then eligible, then overdue as the clock moves), at the active segment for the odd ones (nothing dirty)."""
    d = root / "logdir"
    d.mkdir()
    for p in range(partitions):
        pd = d / f"orders-{p}"
        pd.mkdir()
        for s in range(3):
            (pd / f"{s * 10:020d}.log").write_bytes(
                v2(items(range(s * 10, s * 10 + 10), tombstone_every=3, distinct=4, step_ms=MINUTE)).data)
    lines = [f"orders {p} {10 if p % 2 == 0 else 20}" for p in range(partitions)]
    (d / "cleaner-offset-checkpoint").write_text(f"0\n{partitions}\n" + "\n".join(lines) + "\n")
    return d


def _append(d: Path, partition: int, at: int) -> None:
    seg = d / f"orders-{partition}" / f"{20:020d}.log"
    with seg.open("ab") as fh:
        fh.write(v2(items(range(at, at + 2), distinct=4, step_ms=MINUTE)).data)


def _lookup(topic, compacted):
    return effective_config(topic, compacted=compacted, command_line={"cleanup.policy": "compact", **CONFIGS})


class _Served:
    """A scanner refreshed by hand into a store, on a clock of the test's."""

    def __init__(self, d: Path, **kwargs):
        self.now = [0.0]
        self.scanner = LogDirScanner([d], config_lookup=_lookup, clock=lambda: self.now[0], **kwargs)
        self.store = Store()
        self.store.register(SOURCE, LOG_DIRS, "c", "1")

    def refresh(self, now: float):
        self.now[0] = now
        snap = self.scanner.refresh()
        self.store.success(SOURCE, snap, 0.0, now)
        return snap

    def collector(self, view: View, cls=PartitionCollector) -> tuple[PartitionCollector, CollectorRegistry]:
        pc = cls(self.store, clock=lambda: self.now[0], view=view)
        reg = CollectorRegistry(auto_describe=False)
        reg.register(pc)
        return pc, reg


class _Reference(PartitionCollector):
    """Each partition made whole at every render, as before the render kept anything: all its series, the health
    verdict of ``View.select`` over them (the whole rule table)."""

    def _partition(self, fams, base, f, queue, now):
        rows, bad = self.view.select(f.cause_name, _partition_rows(f.report, now) + _queue_rows(queue, f.key))
        _add_lines(fams, self._lines.get(base, [(M.P_CAUSE, (f.cause_name,), 1.0)]
                                         + [(n, tuple(e[x] for x in EXTRA[n]), v) for n, e, v in rows]))
        return bad


def _numeric(t: Thresholds) -> list[str]:
    return [k for k, v in vars(t).items() if isinstance(v, (int, float)) and not isinstance(v, bool)]


# the defaults, and every numeric threshold 0: a steady rule then holds on partitions whose cause is settled
ZERO = Thresholds(**{k: 0 for k in _numeric(Thresholds())})
PAGE = fast(choose_encoder("")[0])
STEP = 4 * MINUTE + 7_000  # the clock's step: about 20 renders across the thresholds


@pytest.mark.parametrize("granularity,thresholds", [("topic", Thresholds()), ("partition", Thresholds()),
                                                    ("topic", ZERO)])
def test_a_kept_render_is_the_page_a_render_from_scratch_makes_as_the_clock_crosses_the_thresholds(
        tmp_path, granularity, thresholds):
    d = _log_dir(tmp_path, 8)
    served = _Served(d)
    kept, reg = served.collector(View(granularity, thresholds))
    pages, rendered, written = [], [], 0
    t = T0 + 20 * MINUTE
    while t < T0 + 110 * MINUTE:
        if (t - T0) // STEP % 5 == 3:  # now and then one partition written (its report changes)
            _append(d, written % 8, 100 + 10 * written)
            written += 1
        served.refresh(t / 1000)
        page = bytes(PAGE(reg))
        for cls in (PartitionCollector, _Reference):  # from scratch: by this render, and made whole
            fresh = served.collector(View(granularity, thresholds), cls)[1]
            assert page == PAGE(fresh), f"{cls.__name__} at T0 + {(t - T0) / MINUTE:.1f} min"
        pages.append(page)
        rendered.append(kept.rendered)
        t += STEP
    # both happened: partitions kept between renders, and the page moved (clock figures, verdicts, writes)
    made = [b - a for a, b in zip(rendered, rendered[1:])]
    assert min(made) < 8 and sum(made) > 0
    assert len(set(pages)) > len(pages) // 2
    text = pages[-1].decode()
    assert 'cause="overdue"' in text or 'cause="eligible"' in text  # an unhealthy one: its every series out
    assert M.P_ACTIVE_AGE in text and M.P_ELIGIBLE_SECONDS in text


def test_the_split_of_the_health_rules_gives_the_whole_tables_verdict_and_the_rows_split_by_clock(tmp_path):
    """Over each partition's series at clock values across the thresholds: the steady rows make no clock or
    queue family and the clock rows only ``CLOCK``'s (so a kept report's steady rows are right at any instant),
    and the steady conditions on the steady rows or the moving ones on all rows hold exactly when the whole
    rule table does, at thresholds that make the rules fire and at the defaults."""
    d = _log_dir(tmp_path, 6)
    served = _Served(d)
    fired = set()
    for minutes in (20, 40, 75, 100):
        now = (T0 + minutes * MINUTE) / 1000
        served.refresh(now)
        facts = from_statuses(served.store.statuses(), now)
        for ld in facts.log_dirs:
            for f in ld.partitions:
                steady, clock, queue = _steady_rows(f.report), _clock_rows(f.report, now), _queue_rows(ld.queue, f.key)
                assert not {r[0] for r in steady} & (CLOCK | QUEUE)
                assert {r[0] for r in clock} <= CLOCK and {r[0] for r in queue} <= QUEUE
                rows = steady + clock + queue
                for t in (Thresholds(), ZERO):
                    whole = series_fire(rows, t)
                    assert whole == (SPLIT.steady_fire(steady, t) or SPLIT.moving_fire(rows, t))
                    fired.add(whole)
    assert fired == {True, False}


def test_one_written_partition_of_a_hundred_is_the_one_rendered_again(tmp_path):
    d = tmp_path / "logdir"
    d.mkdir()
    for p in range(100):
        (d / f"orders-{p}").mkdir()
        (d / f"orders-{p}" / f"{0:020d}.log").write_bytes(v2(items(range(0, 10), distinct=4, step_ms=MINUTE)).data)
        (d / f"orders-{p}" / f"{10:020d}.log").write_bytes(v2(items(range(10, 14), distinct=4, step_ms=MINUTE)).data)
    (d / "cleaner-offset-checkpoint").write_text("0\n100\n" + "".join(f"orders {p} 10\n" for p in range(100)))
    served = _Served(d, headers_first=True)
    now = T0 / 1000 + 3600
    served.refresh(now)
    while served.scanner.busy():  # the record pass, as the collector's refreshes read it
        now += 30
        served.refresh(now)
    for granularity in ("topic", "partition"):
        pc, reg = served.collector(View(granularity))
        now += 30
        served.refresh(now)  # a measured write rate of 0: reports reused from here
        PAGE(reg)
        assert pc.rendered == 100
        now += 30
        assert served.refresh(now).reused == 100
        PAGE(reg)
        assert pc.rendered == 100  # nothing written, the clock moved: none made again
        _append(d, 7, 14)
        now += 30
        assert served.refresh(now).folded == 1
        page = PAGE(reg)
        assert pc.rendered == 101  # the written one only
        assert page == PAGE(served.collector(View(granularity))[1])


def test_a_kept_verdict_is_view_selects_also_where_a_steady_rule_holds_on_a_settled_cause(tmp_path):
    """A partition whose cause is settled but whose own series make a steady rule hold (tombstones past their
    delete horizon) is unhealthy, and stays so while kept: the verdict the render returns and keeps is
    ``View.select``'s over all its series, at the first render of a report and at the next."""
    d = _log_dir(tmp_path, 4)
    served = _Served(d)
    now = (T0 + 20 * MINUTE) / 1000
    served.refresh(now)
    facts = from_statuses(served.store.statuses(), now)
    (ld,) = facts.log_dirs
    piled = [dataclasses.replace(f, report=dataclasses.replace(
        f.report, state=dataclasses.replace(f.report.state, tombstones_past_delete_horizon=3))) for f in ld.partitions]
    pc = PartitionCollector(served.store, clock=lambda: now, view=View())
    verdicts = set()
    for _ in range(2):  # made, then kept
        fams = {n: line_family(n) for n in PartitionCollector.names if _per_partition(n)}
        pc._next = {}
        for f in list(ld.partitions) + piled:
            base = ("c", "1", f.topic, str(f.partition))
            want = pc.view.select(f.cause_name, _partition_rows(f.report, now) + _queue_rows(ld.queue, f.key))[1]
            assert pc._partition(fams, base, f, ld.queue, now) == want
            verdicts.add((f.cause_name in SETTLED, want))
        pc._kept = pc._next
    assert (True, True) in verdicts and (True, False) in verdicts


def _broker(io_bytes_per_second: float) -> BrokerFacts:
    """A broker whose cleaner runs at ``io_bytes_per_second`` under a 1 MB/s throttle."""
    return BrokerFacts(0.0, "jmx", True, 1, IoRate(io_bytes_per_second, 30.0, "measured"),
                       BrokerSetting(IO_MAX, 1_000_000.0, "admin"), broker="1")


def test_causes_are_kept_while_the_cleaners_io_rate_moves_and_chosen_again_when_it_reaches_the_throttle(tmp_path):
    """The gauges measure the cleaner's I/O rate again at every refresh: a rate that moves below the throttle
    changes no cause (none explained again), one that reaches it makes the eligible partitions' cause
    throttled_cleaner (all explained again); each kept name is the one explained from scratch."""
    d = _log_dir(tmp_path, 6)
    served = _Served(d)
    now = (T0 + 40 * MINUTE) / 1000
    snap = served.refresh(now)
    causes = CauseCache()
    names = []
    for rate in (100.0, 250.0, 5_000.0, 999_000.0, 998_000.0):
        facts = log_dir_facts(snap, now, broker_facts=_broker(rate), causes=causes)
        for f in facts.partitions:
            assert f.cause_name == f.report.cause(now, broker=_broker(rate)).cause
        names.append(({f.cause_name for f in facts.partitions}, causes.builds))
    assert [b for _, b in names] == [6, 6, 6, 12, 12]
    assert "throttled_cleaner" in names[-1][0] and "throttled_cleaner" not in names[0][0]
