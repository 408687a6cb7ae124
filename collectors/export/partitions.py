"""The exporter's partitions area: per partition of the log dirs read here, and per topic the aggregates
over one broker's partitions. Each partition's series are built from its facts (``collectors.export.facts``:
report, cause), then kept whole or cut to ``metrics.PARTITION_DEFAULT`` by ``View.select`` (granularity
and health). A partition that could not be read has only its unknown cause and why its state is unknown.
"""

from __future__ import annotations

from collectors.export import metrics as M
from collectors.export.lines import LinesCache
from collectors.export.view import DEFAULT, EXTRA, StoreCollector, families, line_family
from collectors.export.facts import ADMIN, Facts, LogDirFacts
from monitor.verdicts.forecasts import ROLLED_BY, max_segment_ms, roll_at
from monitor.verdicts.health import SETTLED, Split, worst_cause
from monitor.kafka.logdir import LEFTOVER_KINDS
from monitor.model.streams import streams_role
from monitor.model.topicconfig import LONG_MAX, NO_DECOMPRESSED_CAP, UNKNOWN
from monitor.model.configdeps import series_depends
from monitor.contract.metricnames import NAMESPACE

# the topic configs each partition series is made from (monitor.model.configdeps, defined once for the collector,
# the audit and the causes): a series whose config value is unknown (the admin API refused it,
# monitor.model.topicconfig) is left out rather than made from Kafka's defaults
CONFIG_DEPENDS = series_depends(NAMESPACE)
# families with no HELP/TYPE on a page without their series: Kafka 4.4's per-record cap (only where a topic sets
# one), and the key-set budget's (issue 43: series only where records are read after headers, the serving
# collector), so that a page of collect --once stays as it was
ONLY_WITH_SAMPLES = frozenset((M.P_DECOMPRESSED_RECORD, M.P_DECOMPRESSED_LIMIT, M.LOG_DIR_ACTIVE_KEYS_BYTES,
                               M.LOG_DIR_ACTIVE_KEYS_OVER_BUDGET, M.LOG_DIR_INDEX_UNTRUSTED))


def _per_partition(name: str) -> bool:
    """A family of one partition's series (labels cluster, broker, topic, partition first): kept as lines."""
    return M.METRICS[name][2][:len(M.P)] == M.P


class PartitionCollector(StoreCollector):
    """Per partition of the log dirs read here, and per topic the aggregates over them; per log dir
    whether it is up, its free space and the room its largest clean needs."""

    names = (M.P_CLEANABLE_RATIO, M.P_UNCLEANED_RATIO, M.P_BLOCKED, M.P_MIN_RATIO, M.P_CLEANABLE_BYTES,
             M.P_UNCLEANED_BYTES, M.P_CLEAN_BYTES, M.P_LOG_BYTES, M.P_HEAD_BYTES,
             M.P_FIRST_DIRTY, M.P_FIRST_UNCLEANABLE, M.P_LSO, M.P_LSO_DISAGREEMENT, M.P_OPEN_TXNS, M.P_HANGING_TXNS,
             M.P_OLDEST_TXN_AGE, M.P_END,
             M.P_ELIGIBLE, M.P_ELIGIBLE_SECONDS, M.P_DELAY, M.P_TOMBSTONES, M.P_OLDEST_TOMBSTONE, M.P_RETENTION,
             M.P_PAST_RETENTION, M.P_PAST_HORIZON, M.P_HORIZON_RECORDS, M.P_NEXT_HORIZON, M.P_FAULTS, M.LOG_DIR_UP, M.LOG_DIR_DOWN, M.P_CAUSE, M.P_LEFTOVER_FILES,
             M.LOG_DIR_FREE, M.LOG_DIR_CLEAN_NEEDED, M.LOG_DIR_FREE_UP, M.T_STREAMS_INFO,
             M.P_ACTIVE_BYTES, M.P_ACTIVE_AGE, M.P_SEGMENT_BYTES, M.P_MAX_SEGMENT_AGE, M.P_ROLL, M.P_ROLL_UNKNOWN,
             M.P_ACTIVE_DUP_RECORDS, M.P_ACTIVE_DUP_BYTES, M.P_ACTIVE_DUP_UNKNOWN, M.T_CONFIG_SOURCE,
             M.P_EMPTY_VALUES, M.P_KEYLESS, M.P_DECOMPRESSED_RECORD, M.P_DECOMPRESSED_LIMIT, M.P_RETENTION_START, M.P_RETENTION_BYTES,
             M.T_MAX_CLEANABLE_RATIO, M.T_CLEANABLE_BYTES, M.T_UNCLEANED_BYTES, M.T_LOG_BYTES, M.T_TOMBSTONES,
             M.T_CAUSE, M.T_UNHEALTHY, M.P_STATE_UNKNOWN, M.LOG_DIR_RELISTS, M.LOG_DIR_STATE_CACHE_UP,
             M.LOG_DIR_STATE_CACHE_RESTORED,
             M.P_DETAIL_PENDING, M.LOG_DIR_READ_BYTES, M.LOG_DIR_PENDING_BYTES, M.LOG_DIR_IO_BUDGET,
             M.LOG_DIR_ACTIVE_KEYS_BYTES, M.LOG_DIR_ACTIVE_KEYS_OVER_BUDGET, M.LOG_DIR_INDEX_UNTRUSTED,
             M.P_NEXT_CLEAN, M.P_NEXT_CLEAN_END, M.P_NEXT_CLEAN_LATE, M.P_NEXT_CLEAN_UNKNOWN,
             M.BROKER_BACKLOG_DRAIN, M.BROKER_BACKLOG_DRAIN_UNKNOWN)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        per_partition = [n for n in self.names if _per_partition(n)]
        self._lines = LinesCache({n: EXTRA[n] for n in per_partition})
        self._kept: dict[tuple, _Kept] = {}  # base -> the partition's render as of its report (last render's)
        self._next: dict[tuple, _Kept] = {}
        self.rendered = 0  # partitions whose series were made from their report (new, or its report changed)

    def _partition(self, fams: dict, base: tuple, f, queue, now: float) -> bool:
        """One read partition's series into the families; whether it is unhealthy (``View.select``'s verdict).

        Its render costs what changed (issue 43): while its report, its cause and the view's thresholds are the
        same as at the last render (``_Kept``), its steady series are not made again nor checked against the
        steady health conditions (``monitor.verdicts.health.Split``); its place in the queue (forecast at every
        build of the facts) is checked against the moving ones, and its clock series (``CLOCK``) are made only
        where they go out or a condition reads them. A healthy partition whose exported series are all steady
        keeps its lines object as it is: it costs a few lookups. Exactly the page a render from scratch makes
        (tested: tests/collectors/export/test_render_reuse.py)."""
        view, rep = self.view, f.report
        k = self._kept.get(base)
        if k is None or k.report is not rep or k.cause != f.cause_name or k.thresholds is not view.thresholds:
            steady = _steady_rows(rep)
            k = _Kept(rep, f.cause_name, view.thresholds, steady)
            self.rendered += 1
        else:
            steady = None
        self._next[base] = k
        moving = _queue_rows(queue, f.key)
        keep_all, bad = view.keep_all, k.bad
        clock = _clock_rows(rep, now) if bad or keep_all or CLOCK_FOR_VERDICT else None
        if not bad and (k.reads or any(r[0] in SPLIT.moving_reads for r in moving + (clock or []))):
            bad = SPLIT.moving_fire(k.reads + moving + (clock or []), view.thresholds)
        if bad or keep_all:
            if clock is None:
                clock = _clock_rows(rep, now)
            rows = (steady if steady is not None else _steady_rows(rep)) + clock + moving
        else:  # a healthy partition: its default series (View.select)
            if clock is None and CLOCK_DEFAULT:
                clock = _clock_rows(rep, now)
            moving = [r for r in (clock or []) + moving if r[0] in DEFAULT]
            if not moving and k.lines is not None and self._lines.keep(base, k.lines):
                _add_lines(fams, k.lines)
                return False
            rows = [r for r in (steady if steady is not None else _steady_rows(rep)) if r[0] in DEFAULT] + moving
        # only the current cause's series (one per partition, not one per cause): count by (cause) works; labels
        # beyond the partition's in the metric's own order
        pl = self._lines.get(base, [(M.P_CAUSE, (f.cause_name,), 1.0)]
                             + [(name, tuple(map(extra.__getitem__, EXTRA[name])), v) for name, extra, v in rows])
        k.lines = None if bad or keep_all or moving else pl  # lines of its steady default series alone: kept
        _add_lines(fams, pl)
        return bad

    @property
    def formatted(self) -> tuple[int, int]:
        """(partitions, lines) formatted over every render: a partition new or changed since the last render,
        the lines of its families whose series changed (``collectors.export.lines``)."""
        return self._lines.formatted, self._lines.formatted_lines

    def _collect(self, facts: Facts):
        """Each partition's series as its lines (``collectors.export.lines``), formatted again only when its
        rows changed since the last render; the log dir and topic families as samples."""
        self._lines.begin()
        self._next = {}
        try:
            fams = self._families(facts)
        finally:
            self._lines.end()
            self._kept, self._next = self._next, {}
        yield from (f for n, f in fams.items()
                    if (f.entries if hasattr(f, "entries") else f.samples) or n not in ONLY_WITH_SAMPLES)

    def _families(self, facts: Facts) -> dict:
        fams = {n: line_family(n) if _per_partition(n) else f for n, f in families(self.names).items()}
        seen = set()  # one info series per (cluster, topic), whichever broker's log dirs hold it (both infos)
        if self.view.broker_role:  # and in the broker role, the one of N collectors reading the topic's leader
            seen.update(_led_elsewhere(facts))

        def emit(base: tuple, rows: list) -> None:
            """A partition's rows, ``(family, extra labels in its order, value)``, into the families."""
            _add_lines(fams, self._lines.get(base, rows))

        for ld in facts.log_dirs:
            self._topic_infos(fams, ld, seen)
            topics: dict[str, _TopicSum] = {}
            lb0 = [ld.cluster, ld.broker]
            for f in ld.unreadable:  # no state, so the cause is unknown
                emit((ld.cluster, ld.broker, f.topic, str(f.partition)),
                     [(M.P_CAUSE, (f.cause_name,), 1.0), (M.P_STATE_UNKNOWN, (f.unknown_reason,), 1.0)])
                topics.setdefault(f.topic, _TopicSum()).add_unknown(f.cause_name)
            fams[M.LOG_DIR_RELISTS].add_metric(lb0, ld.snapshot.relists_total)
            if ld.snapshot.state_cache is not None:  # (usable, reason, restored): collectors.logdirs.summary_state
                up, reason, restored = ld.snapshot.state_cache
                fams[M.LOG_DIR_STATE_CACHE_UP].add_metric(lb0 + [reason], 1.0 if up else 0.0)
                fams[M.LOG_DIR_STATE_CACHE_RESTORED].add_metric(lb0, restored)
            io = ld.snapshot.io
            if io is not None:
                fams[M.LOG_DIR_READ_BYTES].add_metric(lb0 + ["header"], io.header_bytes)
                fams[M.LOG_DIR_READ_BYTES].add_metric(lb0 + ["detail"], io.detail_bytes)
                fams[M.LOG_DIR_PENDING_BYTES].add_metric(lb0, io.pending_bytes)
                if io.budget_bytes_per_second is not None:
                    fams[M.LOG_DIR_IO_BUDGET].add_metric(lb0, io.budget_bytes_per_second)
                fams[M.LOG_DIR_ACTIVE_KEYS_BYTES].add_metric(lb0, io.active_keys_bytes)
                fams[M.LOG_DIR_ACTIVE_KEYS_OVER_BUDGET].add_metric(lb0, io.active_keys_over_budget)
                fams[M.LOG_DIR_INDEX_UNTRUSTED].add_metric(lb0, io.index_untrusted_segments)
            for d in ld.snapshot.log_dirs:
                fams[M.LOG_DIR_UP].add_metric(lb0 + [d], 0.0 if d in ld.snapshot.down else 1.0)
                if d in ld.snapshot.down:
                    fams[M.LOG_DIR_DOWN].add_metric(lb0 + [d, ld.snapshot.down[d][0]], 1.0)
            for sp in ld.snapshot.space:
                lb = lb0 + [sp.log_dir]
                fams[M.LOG_DIR_FREE_UP].add_metric(lb, 0.0 if sp.error else 1.0)
                if sp.free_bytes is not None:
                    fams[M.LOG_DIR_FREE].add_metric(lb, sp.free_bytes)
                if sp.need is not None:
                    fams[M.LOG_DIR_CLEAN_NEEDED].add_metric(lb, sp.need.bytes)
            ratio_known: dict = {}  # id(config) -> (config, whether the cleanable figures are its own)
            for f in ld.partitions:
                bad = self._partition(fams, (ld.cluster, ld.broker, f.topic, str(f.partition)), f, ld.queue,
                                      facts.now)
                cfg = f.report.config
                known = ratio_known.get(id(cfg))
                if known is None:  # a topic's partitions share their config object: checked once a topic
                    known = ratio_known[id(cfg)] = (cfg, cfg.known(*CONFIG_DEPENDS[M.P_CLEANABLE_RATIO]))
                topics.setdefault(f.topic, _TopicSum()).add(f.state, f.cause_name, bad, known[1],
                                                            f.report.detail_pending)
            for topic, t in sorted(topics.items()):
                t.emit(fams, lb0 + [topic])
            _drain(fams, ld.queue, lb0)
        return fams

    @staticmethod
    def _topic_infos(fams, ld: LogDirFacts, seen: set) -> None:
        """Where each topic's config came from, and a Kafka Streams topic's role: once per (cluster, topic)."""
        for f in ld.partitions:
            if ("config", ld.cluster, f.topic) not in seen:
                seen.add(("config", ld.cluster, f.topic))
                c = f.report.config
                fams[M.T_CONFIG_SOURCE].add_metric([ld.cluster, f.topic, c.source,
                                                    c.refusal.code if c.refusal is not None else ""], 1.0)
        for topic in sorted({f.topic for f in ld.partitions}):
            role = streams_role(topic)
            if role and (ld.cluster, topic) not in seen:
                seen.add((ld.cluster, topic))
                fams[M.T_STREAMS_INFO].add_metric([ld.cluster, topic, role], 1.0)


def _add_lines(fams: dict, pl) -> None:
    """A partition's ``PartitionLines`` into each of its families."""
    for name in pl.shape.families:
        fams[name].entries.append(pl)


_NO_ROWS: list = []  # shared by every _Kept without rows the moving conditions read (never written: only added to)


class _Kept:
    """One partition's render as of its report, kept from one render to the next while the report (the scanner
    hands an unchanged partition's on again), its cause's name and the view's thresholds are the same: whether
    its steady series alone make it unhealthy (its cause not settled, or a steady condition holding: ``bad``),
    those of them the moving conditions read (``reads``: none with today's rule table), and the lines it had at
    the last render when they were its steady default series alone (``lines``: kept as they are). Its series
    themselves are not kept (some 5 KB a partition): a healthy one's are in its lines, an unhealthy one's are made
    again (its clock series move anyway)."""

    __slots__ = ("report", "cause", "thresholds", "bad", "reads", "lines")

    def __init__(self, report, cause: str, thresholds, steady: list):
        self.report, self.cause, self.thresholds = report, cause, thresholds
        self.bad = cause not in SETTLED or SPLIT.steady_fire(steady, thresholds)
        self.reads = [r for r in steady if r[0] in SPLIT.moving_reads] or _NO_ROWS
        self.lines = None


def _led_elsewhere(facts: Facts) -> set:
    """``seen`` keys of the topics whose lowest partition's leader (the admin snapshot's) has no log dirs read
    here: a broker-role collector leaves their per-topic infos to the collector of that leader. A topic the
    admin API does not list (its leader unknown) keeps them, whichever collectors hold it."""
    read = {(ld.cluster, ld.broker) for ld in facts.log_dirs}
    out = set()
    for st in facts.of_kind(ADMIN):
        for t, info in st.snapshot.topics.items():
            if info.partitions and (st.cluster, str(info.partitions[min(info.partitions)].leader)) not in read:
                out.update({("config", st.cluster, t), (st.cluster, t)})
    return out


class _TopicSum:
    """The topic aggregates over one broker's partitions of a topic (``metrics.T_*``)."""

    def __init__(self):
        self.ratio, self.cleanable, self.uncleaned, self.log, self.tombstones = None, 0, 0, 0, 0
        self.causes: set[str] = set()
        self.unhealthy = 0
        self.partitions = 0  # read ones (an unreadable partition adds only its unknown cause)

    def add(self, s, cause: str, bad: bool, known: bool = True, pending: bool | None = None) -> None:
        """``known``: whether the configs the cleanable ratio is made from are the partition's own
        (``CONFIG_DEPENDS``): what is cleanable moves with the compaction lags, so a partition whose lags are
        unknown adds nothing to the cleanable figures (never Kafka's defaults passed off as its config, as for its
        own series)."""
        if known:
            self.ratio = s.cleanable_ratio if self.ratio is None else max(self.ratio, s.cleanable_ratio)
            self.cleanable += s.cleanable_bytes
        self.partitions += 1
        self.uncleaned += s.uncleaned_bytes
        self.log += s.log_bytes
        if pending:  # a partial count is no count: the topic's sum is left out while one is pending
            self.tombstones = None
        elif self.tombstones is not None:
            self.tombstones += s.tombstones_clean + s.tombstones_dirty
        self.causes.add(cause)
        self.unhealthy += bad

    def add_unknown(self, cause: str) -> None:
        """A partition that could not be read: its cause (unknown) counts, its figures are not summed."""
        self.causes.add(cause)
        self.unhealthy += 1

    def emit(self, fams, lb) -> None:
        if self.ratio is not None:
            fams[M.T_MAX_CLEANABLE_RATIO].add_metric(lb, self.ratio)
            fams[M.T_CLEANABLE_BYTES].add_metric(lb, self.cleanable)
        if self.partitions:
            fams[M.T_UNCLEANED_BYTES].add_metric(lb, self.uncleaned)
            fams[M.T_LOG_BYTES].add_metric(lb, self.log)
            if self.tombstones is not None:
                fams[M.T_TOMBSTONES].add_metric(lb, self.tombstones)
        fams[M.T_CAUSE].add_metric(lb + [worst_cause(self.causes)], 1.0)
        fams[M.T_UNHEALTHY].add_metric(lb, self.unhealthy)


def _adder(rep, rows: list):
    """``add(metric, value, **extra labels)`` into ``rows``: a series made from a config value unknown is left
    out (``CONFIG_DEPENDS``)."""
    known = rep.config.known
    if UNKNOWN not in rep.config.sources.values():  # the common case: no series to check (one test)
        return lambda n, v, **extra: rows.append((n, extra, v))

    def add(n, v, **extra):
        if known(*CONFIG_DEPENDS.get(n, ())):
            rows.append((n, extra, v))
    return add


def _partition_rows(rep, now: float) -> list[tuple[str, dict, float]]:
    """Every series of one partition but its cause and its place in the queue: ``(metric, labels beyond the
    partition's, value)``, those made from the report alone (``_steady_rows``) then those that move with the
    clock (``_clock_rows``). A family is made by one of the two only, so each family's series keep their order."""
    return _steady_rows(rep) + _clock_rows(rep, now)


def _steady_rows(rep) -> list[tuple[str, dict, float]]:
    """The series made from the report alone (no clock: the same for as long as the report is the same object,
    which the collector's render keeps them by, ``PartitionCollector``)."""
    s = rep.state
    rows: list[tuple[str, dict, float]] = []
    add = _adder(rep, rows)
    add(M.P_CLEANABLE_RATIO, s.cleanable_ratio)
    add(M.P_UNCLEANED_RATIO, s.uncleaned_ratio)
    if s.blocked_by:
        add(M.P_BLOCKED, 1.0, reason=s.blocked_by)
    add(M.P_MIN_RATIO, s.min_cleanable_dirty_ratio)
    add(M.P_CLEANABLE_BYTES, s.cleanable_bytes)
    add(M.P_UNCLEANED_BYTES, s.uncleaned_bytes)
    add(M.P_CLEAN_BYTES, s.clean_bytes)
    add(M.P_LOG_BYTES, s.log_bytes)
    for held_by, n in s.not_yet_cleanable_split().items():
        add(M.P_HEAD_BYTES, n, held_by=held_by)
    add(M.P_FIRST_DIRTY, s.first_dirty_offset)
    add(M.P_FIRST_UNCLEANABLE, s.first_uncleanable_offset)
    add(M.P_LSO, s.last_stable_offset)
    add(M.P_OPEN_TXNS, len(s.open_transactions))
    add(M.P_HANGING_TXNS, s.hanging_transactions)
    ages = [t.age_ms for t in s.open_transactions if t.age_ms is not None]  # as of the fold (folded every refresh)
    if ages:
        add(M.P_OLDEST_TXN_AGE, max(ages) / 1000.0)
    add(M.P_END, s.log_end_offset)
    add(M.P_ELIGIBLE, 1.0 if s.eligible else 0.0)
    add(M.P_DELAY, s.compaction_delay_ms / 1000.0)
    add(M.P_FAULTS, s.faults)
    for kind, states in s.delete_horizon_records.items():  # a kind not yet known (tombstones while records are
        for state, n in (states or {}).items():  # unread) has no series (monitor.model.horizoncount)
            add(M.P_HORIZON_RECORDS, n, kind=kind, state=state)
    for kind in LEFTOVER_KINDS.values():  # every kind, 0 included: absent means not read
        add(M.P_LEFTOVER_FILES, sum(1 for x in rep.leftovers if x.kind == kind), log_dir=rep.log_dir, kind=kind)
    _active_segment(add, rep)
    if rep.retention is not None:
        add(M.P_RETENTION_START, rep.retention.log_start_offset)
        add(M.P_RETENTION_BYTES, rep.retention.deleted_bytes)
    add(M.P_RETENTION, s.delete_retention_ms / 1000.0)
    if rep.detail_pending is not None:
        add(M.P_DETAIL_PENDING, 1.0 if rep.detail_pending else 0.0)
    if not rep.detail_pending:  # record-level figures: whole, or absent (never a partial count)
        _record_rows(add, rep)
    return rows


# The families ``_clock_rows`` makes: their values move with the clock for the same report (an age, the time
# left to a deadline, a forecast from now). Only these are made again at a render of an unchanged report; a test
# checks that ``_clock_rows`` makes no other and ``_steady_rows`` none of these.
CLOCK = frozenset((M.P_LSO_DISAGREEMENT, M.P_ELIGIBLE_SECONDS, M.P_NEXT_HORIZON, M.P_OLDEST_TOMBSTONE,
                   M.P_ACTIVE_AGE, M.P_ROLL, M.P_ROLL_UNKNOWN))
# the families of a partition's place in its broker's cleaner queue (``_queue_rows``): forecast again at every
# build of the facts, over every partition (``collectors.export.facts.LogDirFacts.queue``)
QUEUE = frozenset((M.P_NEXT_CLEAN, M.P_NEXT_CLEAN_END, M.P_NEXT_CLEAN_LATE, M.P_NEXT_CLEAN_UNKNOWN))


def _clock_rows(rep, now: float) -> list[tuple[str, dict, float]]:
    """The series of ``CLOCK``, at ``now``: a reused report's state is as of its fold, and what it keeps of the
    instants (``monitor.model.compaction.AS_OF_FOLD``) is taken at the render."""
    s, c, known = rep.state, rep.config.config, rep.config.known
    now_ms = int(now * 1000)
    rows: list[tuple[str, dict, float]] = []
    add = _adder(rep, rows)
    if rep.lso_check is not None and rep.lso_check.agree is not None:
        d = rep.lso_disagreement
        add(M.P_LSO_DISAGREEMENT, 0.0 if d is None else max(now - d.since, 0.0), lso_source=s.last_stable_offset_source)
    add(M.P_ELIGIBLE_SECONDS, max(now - rep.eligible_since, 0.0) if rep.eligible_since else 0.0)
    nxt = s.next_delete_horizon_at(now_ms)
    if nxt is not None:
        add(M.P_NEXT_HORIZON, nxt / 1000.0)
    if not rep.detail_pending:  # a record-level figure: whole, or absent
        age = s.oldest_tombstone_age_at(now_ms)
        if age is not None:
            add(M.P_OLDEST_TOMBSTONE, age / 1000.0)
    age = s.active_segment_age_ms(now_ms)
    if age is not None:
        add(M.P_ACTIVE_AGE, age / 1000.0)
    # the cause's forecast, made at the render: a cause reused from an earlier refresh (collectors.export.facts)
    # holds it as of its build
    roll = roll_at(s, c, rep.config.sources, rep.rate(now), now_ms)
    if not known(*CONFIG_DEPENDS[M.P_ROLL]):
        add(M.P_ROLL_UNKNOWN, 1.0, reason="topic_config_unknown")
    elif roll["at_ms"] is not None and roll["code"] in ROLLED_BY:
        add(M.P_ROLL, roll["in_seconds"], by=roll["code"])
    else:
        add(M.P_ROLL_UNKNOWN, 1.0, reason=roll["code"] or "write_rate_unknown")
    return rows


# the health conditions cut by what moves between two renders of one report (its clock series, its place in the
# queue); whether a moving condition reads a clock series (none does today: then a healthy partition's are not made
# unless exported), and whether a healthy partition exports one (View.select: DEFAULT)
SPLIT = Split(CLOCK | QUEUE)
CLOCK_FOR_VERDICT = bool(SPLIT.moving_reads & CLOCK)
CLOCK_DEFAULT = bool(DEFAULT & CLOCK)


def _queue_rows(queue, key) -> list[tuple[str, dict, float]]:
    """The partition's next clean, forecast over its broker's queue (``collectors.export.facts``: ``LogDirFacts.queue``):
    its start and end, how late against a max.compaction.lag.ms deadline still ahead, or why unknown."""
    c = queue.cleans.get(key) if queue is not None else None
    if c is None:  # not in the queue: not compacted
        return []
    if c.start_ms is None:
        return [(M.P_NEXT_CLEAN_UNKNOWN, {"reason": c.code or "unknown"}, 1.0)]
    rows = [(M.P_NEXT_CLEAN, {}, c.start_ms / 1000.0)]
    if c.end_ms is not None:
        rows.append((M.P_NEXT_CLEAN_END, {}, c.end_ms / 1000.0))
    if c.due_ms is not None and c.due_ms > queue.now_ms:
        rows.append((M.P_NEXT_CLEAN_LATE, {}, c.late_ms / 1000.0))
    return rows


def _drain(fams, queue, lb) -> None:
    if queue is None or not queue.cleans:
        return
    if queue.drain_ms is not None:
        fams[M.BROKER_BACKLOG_DRAIN].add_metric(lb, queue.drain_seconds)
    else:
        fams[M.BROKER_BACKLOG_DRAIN_UNKNOWN].add_metric(lb + [queue.drain_code or "unknown"], 1.0)


def _record_rows(add, rep) -> None:
    """The figures only a partition's records tell (tombstones, keyless and empty values); the oldest
    tombstone's age moves with the clock (``_clock_rows``)."""
    s = rep.state
    add(M.P_TOMBSTONES, s.tombstones_clean, section="clean")
    add(M.P_TOMBSTONES, s.tombstones_dirty, section="dirty")
    add(M.P_PAST_RETENTION, s.tombstones_past_retention)
    add(M.P_PAST_HORIZON, s.tombstones_past_delete_horizon)
    # issue 16: producer pitfalls counted on disk
    add(M.P_EMPTY_VALUES, rep.empty_value_records)
    add(M.P_KEYLESS, rep.keyless_records)
    if s.max_decompressed_message_bytes < NO_DECOMPRESSED_CAP:  # a per-record cap set (Kafka 4.4)
        add(M.P_DECOMPRESSED_RECORD, s.max_decompressed_record_bytes)
        add(M.P_DECOMPRESSED_LIMIT, s.max_decompressed_message_bytes)


def _active_segment(add, rep) -> None:
    """The active segment against its roll settings (its age and the roll forecast move with the clock:
    ``_clock_rows``), and its duplicates."""
    s, c = rep.state, rep.config.config
    add(M.P_ACTIVE_BYTES, s.active_segment_bytes)
    add(M.P_SEGMENT_BYTES, c.segment_bytes)  # left out by add when segment.bytes is unknown
    limit = max_segment_ms(c)
    add(M.P_MAX_SEGMENT_AGE, float("inf") if limit >= LONG_MAX else limit / 1000.0)
    k = rep.active_keys
    if rep.detail_pending:  # its keys are records: absent until read (partition_detail_pending says so)
        return
    if k is not None and k.known:
        add(M.P_ACTIVE_DUP_RECORDS, k.duplicate_records)
        add(M.P_ACTIVE_DUP_BYTES, k.duplicate_bytes)
    else:
        why = ("not_read" if k is None else "over_budget" if k.over_budget else "over_bound" if k.over_bound
               else "read_fault")
        add(M.P_ACTIVE_DUP_UNKNOWN, 1.0, reason=why)
