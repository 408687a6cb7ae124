"""collectors.export.lines: a partition's series kept as their lines are the very bytes prometheus_client
writes for the same samples (every per-partition family of the partitions area, odd label values and
numbers, in every format choose_encoder negotiates), and a render formats only what changed: counted by
the cache's own counters, never timed.

The reference is prometheus_client's own encoders over families built as before this change
(``collectors.export.view.family`` and ``add_metric``); the changed-partition test runs the real log-dir
source over a log dir written here (tests/recordfixtures.py)."""

from __future__ import annotations

import gzip
import math
import re
import shutil
import subprocess

import pytest
from prometheus_client import CollectorRegistry
from prometheus_client.exposition import choose_encoder
from prometheus_client.registry import Collector

from collectors.app import build
from collectors.export import metrics as M
from collectors.export.encoding import fast
from collectors.export.lines import LinesCache
from collectors.export.partitions import PartitionCollector, _per_partition
from collectors.export.view import EXTRA, View, family, line_family
from monitor.settings.config import BrokerConfig, ClusterConfig, Config
from recordfixtures import items, v2, write
from test_encoding import ACCEPTS

FAMILIES = [n for n in PartitionCollector.names if _per_partition(n)]
BASES = [("c", "1", "orders", "0"), ("c-2", "10", 'we"ird\\top\nic', "7"), ("ü", "3", "ünïcödé ✓", "12")]
VALUES = [1.0, -0.0, math.inf, -math.inf, math.nan, 1e21, 12345678.9, 3, True, 0.0, 0.1, -2.5e-7]


def rows_of(i: int, shift: float = 0.0) -> list:
    """Partition ``i``'s rows: every per-partition family, one or two series each (the extra labels odd too)."""
    out = []
    for j, name in enumerate(FAMILIES):
        for k in range(1 + (j % 2)):
            extra = tuple(f'{x}-{k}"\\' if (i + j) % 3 else f"v{k}" for x in EXTRA[name])
            v = VALUES[(i + j + k) % len(VALUES)]
            out.append((name, extra, v + shift if shift and j == k == 0 else v))
    return out


class Lines(Collector):
    """The families as the partitions area makes them: from a ``LinesCache``."""

    def __init__(self):
        self.cache = LinesCache({n: EXTRA[n] for n in FAMILIES})
        self.shift = 0.0

    def collect(self):
        fams = {n: line_family(n) for n in FAMILIES}
        self.cache.begin()
        try:
            for i, base in enumerate(BASES):
                pl = self.cache.get(base, rows_of(i, self.shift if i == 1 else 0.0))
                for name in pl.shape.families:
                    fams[name].entries.append(pl)
        finally:
            self.cache.end()
        return iter(fams.values())


class Reference(Collector):
    """The same series as samples, built as before (``view.family``, ``add_metric``)."""

    def __init__(self, lines: Lines):
        self.lines = lines

    def collect(self):
        fams = {n: family(n) for n in FAMILIES}
        for i, base in enumerate(BASES):
            for name, extra, v in rows_of(i, self.lines.shift if i == 1 else 0.0):
                fams[name].add_metric(list(base + extra), v)
        return iter(fams.values())


def _fixed(families):
    class Fixed(Collector):
        def collect(self):
            return iter(families)

    return Fixed()


@pytest.mark.parametrize("accept", ACCEPTS)
def test_the_kept_lines_are_prometheus_clients_bytes_for_every_partition_family(accept):
    lines = Lines()
    ref = Reference(lines)
    encoder, _ = choose_encoder(accept)
    for shift in (0.0, 0.5):  # the second render: partition 1's first family changed, the rest kept
        lines.shift = shift
        got = list(lines.collect())
        want = encoder(_fixed(list(ref.collect())))
        assert fast(encoder)(_fixed(got)) == want  # the kept lines (or the fallback for another escaping)
        assert encoder(_fixed(got)) == want  # the samples a LineFamily makes for prometheus_client's encoders
    page = fast(choose_encoder("")[0])(_fixed(got)).decode()
    assert all(f"# TYPE {n} gauge" in page for n in FAMILIES)  # every family present
    assert 'topic="we\\"ird\\\\top\\nic"' in page and "NaN" in page and "-0.0" in page


def test_a_render_formats_only_the_family_that_changed():
    lines = Lines()
    list(lines.collect())
    every = lines.cache.formatted_lines
    assert lines.cache.formatted == len(BASES) and every == sum(len(rows_of(i)) for i in range(len(BASES)))
    list(lines.collect())  # nothing changed: nothing formatted
    assert (lines.cache.formatted, lines.cache.formatted_lines) == (len(BASES), every)
    lines.shift = 1.0  # partition 1's first family's one series
    list(lines.collect())
    assert (lines.cache.formatted, lines.cache.formatted_lines) == (len(BASES) + 1, every + 1)
    list(lines.collect())  # the same value again: kept
    assert lines.cache.formatted_lines == every + 1


PARTITIONS = 40
# what the log-dir scan computes from its own clock (not the render's): the oldest tombstone's age, and the
# next delete horizon of tombstones no clean has stamped yet (as of the scan)
SCAN_CLOCK = {M.P_OLDEST_TOMBSTONE, M.P_NEXT_HORIZON}


def _log_dir(tmp_path):
    """``PARTITIONS`` partitions, each a cleaned segment and an active one, the checkpoint at the active one."""
    d = tmp_path / "logdir"
    for p in range(PARTITIONS):
        write(d / f"orders-{p}" / "00000000000000000000.log",
              [v2(items(range(0, 10), distinct=6)), v2(items(range(10, 20), tombstone_every=5, distinct=6))])
        write(d / f"orders-{p}" / "00000000000000000020.log", [v2(items(range(20, 24), distinct=6))])
    (d / "cleaner-offset-checkpoint").write_text(
        f"0\n{PARTITIONS}\n" + "".join(f"orders {p} 20\n" for p in range(PARTITIONS)))
    return d


def _series(line: str) -> tuple[str, str]:
    """(family, partition) of a partition's line."""
    return line.split("{", 1)[0], re.search(r'partition="(\d+)"', line).group(1)


def _formatted_only_what_changed(before: list, after: list, formatted_lines: int) -> set:
    """At least every changed line was formatted, at most the lines of the (family, partition) pairs with one:
    the (family, partition) pairs changed."""
    was = set(before)
    changed = [x for x in after if x not in was and 'partition="' in x]
    touched = {_series(x) for x in changed}
    assert len(changed) <= formatted_lines <= sum(1 for x in after if 'partition="' in x and _series(x) in touched)
    return touched


@pytest.mark.parametrize("granularity", ["partition", "topic"])
def test_a_steady_render_with_one_partition_written_formats_that_partition_only(tmp_path, granularity):
    """1 of 40 partitions written between two refreshes: the render after formats its changed series and
    what moved with the scan's clock only (``SCAN_CLOCK``), never an unchanged line. At
    granularity topic, where a healthy partition has no age series, that is the written partition alone."""
    d = _log_dir(tmp_path)
    col = build(Config(clusters=(ClusterConfig(name="c", brokers=(BrokerConfig(id="1", log_dirs=(str(d),)),)),)))
    try:
        reg = CollectorRegistry(auto_describe=False)
        pc = PartitionCollector(col.store, clock=lambda: 2e9, view=View(granularity))
        reg.register(pc)
        text = fast(choose_encoder("")[0])
        assert col.runner.refresh_all() and col.runner.refresh_all()  # a measured write rate: 0 B/s
        before = text(reg).decode().splitlines()
        first = pc.formatted
        assert first[0] == PARTITIONS and first[1] == sum(1 for x in before if 'partition="' in x)
        col.runner.refresh_all()
        again = text(reg).decode().splitlines()
        clock = _formatted_only_what_changed(before, again, pc.formatted[1] - first[1])
        assert {f for f, _ in clock} <= SCAN_CLOCK  # nothing written: only what ages with the clock
        first = pc.formatted
        seg = d / "orders-7" / "00000000000000000020.log"
        seg.write_bytes(seg.read_bytes() + v2(items(range(24, 30), tombstone_every=2, distinct=6)).data)
        col.runner.refresh_all()
        after = text(reg).decode().splitlines()
        partitions, lines = pc.formatted[0] - first[0], pc.formatted[1] - first[1]
        touched = _formatted_only_what_changed(again, after, lines)
        assert {p for f, p in touched if f not in SCAN_CLOCK} == {"7"}
        if granularity == "topic":
            assert partitions == 1 and lines >= 1
        else:  # the end offset, the bytes of the written partition, and nothing else of the others
            assert {M.P_END, M.P_LOG_BYTES, M.P_ACTIVE_BYTES} <= {f for f, p in touched if p == "7"}
            assert reg.get_sample_value(M.P_END, {"cluster": "c", "broker": "1", "topic": "orders",
                                                  "partition": "7"}) == 30.0
    finally:
        col.close()


@pytest.mark.parametrize("accept", ["", "application/openmetrics-text;version=1.0.0",
                                    "application/openmetrics-text;version=1.0.0;escaping=dots"])
def test_a_gzip_page_asked_for_first_is_compressed_as_it_is_written_and_decodes_to_the_plain_page(accept):
    """Prometheus asks for gzip only: that page is compressed piece by piece, never holding the plain page;
    it decodes to the bytes an identity scrape gets (asked for after it: encoded on its own), and to
    prometheus_client's, also where prometheus_client writes the page (another escaping)."""
    from collectors.export.exposition import RenderedExposition

    reg = CollectorRegistry(auto_describe=False)
    reg.register(Lines())
    rendered = RenderedExposition(reg)
    assert rendered.render()
    z = rendered.page(accept, "gzip")
    assert z.gzip and z.body[:2] == b"\x1f\x8b"
    plain = rendered.page(accept, None)
    assert not plain.gzip and gzip.decompress(z.body) == plain.body
    encoder, _ = choose_encoder(accept)
    assert plain.body == encoder(_fixed(list(Reference(Lines()).collect())))


def test_the_kept_lines_pass_promtool_check_metrics():
    """Prometheus' own lint on the page written from the kept lines (every per-partition family), as
    tests/collectors/test_promtool_metrics.py runs it on every declared family."""
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.fail("promtool is missing: ./dev installs Debian's prometheus package")
    reg = CollectorRegistry(auto_describe=False)
    reg.register(Lines())
    page = fast(choose_encoder("")[0])(reg)
    assert page.count(b"# TYPE ") == len(FAMILIES)
    r = subprocess.run([promtool, "check", "metrics"], input=bytes(page), capture_output=True)
    assert r.returncode == 0 and not r.stdout.strip() and not r.stderr.strip(), (r.stdout + r.stderr).decode()
