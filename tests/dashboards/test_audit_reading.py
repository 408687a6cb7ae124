"""The Audit page as a person reads it (issue 41), over a real audit (local Spark) of segments written here:
``orders`` in two partitions of two segments where ``key-505`` is the most updated key of both, with
tombstones all written in the same minute, and ``bin-keys`` whose keys are not text. The page starts from its conclusions with units;
every table is headed in words, with no ``None``, ``nan`` or scientific notation in a cell and no more
columns than a laptop screen shows; each key is escaped and beside its partition; a chart is drawn only
with two or more points, else a sentence says why."""

from __future__ import annotations

import json
import re

import pyarrow.parquet as pq
import pytest

from dashpages import page
from monitor.contract import units
from recordfixtures import T0, Rec, v2, write

pytestmark = pytest.mark.slow  # one real Spark audit

BAD_CELL = re.compile(r"^(None|nan|NaN|NaT|<NA>)$|\d[eE][+-]?\d")
MOST_COLUMNS = 8  # what a 1366-pixel window shows without scrolling sideways (the browser check measures it)


def records(partition: int) -> list[Rec]:
    """600 records 10 ms apart: every third is key-505 (its most updated key), the rest 40 other keys; every
    seventh a tombstone."""
    out = []
    for o in range(600):
        key = b"key-505" if o % 3 == 0 else f"key-{partition}-{o % 40}".encode()
        out.append(Rec(o, T0 + o * 10, key, None if o % 7 == 6 else f"value {o} ".encode() * 6))
    return out


@pytest.fixture(scope="module")
def audited(_spark_sessions, tmp_path_factory):
    spark = _spark_sessions.get(kafka_source=False)
    from spark_analysis.job import build_parser, run

    tmp = tmp_path_factory.mktemp("audit-reading")
    for p in (0, 1):
        recs = records(p)
        for first in (0, 300):  # two segments: the first one is the cleaner's to clean
            write(tmp / "logs" / f"orders-{p}" / f"{first:020d}.log",
                  [v2(recs[i:i + 20]) for i in range(first, first + 300, 20)])
    binary = [Rec(o, T0 + o * 5, bytes([0, 1, 0xFF, o % 4]), b"v" * 40) for o in range(60)]
    write(tmp / "logs" / "bin-keys-0" / f"{0:020d}.log", [v2(binary[i:i + 20]) for i in range(0, 60, 20)])
    base, summary = run(build_parser().parse_args(["--input", str(tmp / "logs"), "--out", str(tmp / "out")]),
                        spark=spark)
    return tmp / "out", base, summary


@pytest.fixture(scope="module")
def shown(audited):
    mp = pytest.MonkeyPatch()
    try:
        yield page("audit", mp, audit_dir=audited[0])
    finally:
        mp.undo()


def test_the_page_starts_from_its_conclusions_with_units(audited, shown):
    _, _, sm = audited
    assert shown.subheader[0].value == "What this audit found"  # before any table
    said = shown.markdown[0].value
    assert said.startswith(f"- The next clean reclaims {units.bytes_iec(sm['reclaimable_bytes'])} of the "
                           f"{units.bytes_iec(sm['bytes'])} scanned")
    assert "need attention. Dirty enough to clean: orders-0, orders-1" in said
    assert (f"Tombstone risk: {units.count(sm['tombstones_past_retention'])} of the "
            f"{units.count(sm['tombstones'])} tombstones on disk are older than delete.retention.ms") in said
    assert "Projection accuracy: unknown (needs an earlier complete run" in said
    metrics = {m.label: m.value for m in shown.metric}
    assert metrics["Scanned"] == units.bytes_iec(sm["bytes"])
    assert metrics["Estimated cleaning time"] == units.duration_s(sm["estimated_clean_seconds"])


def test_every_table_is_headed_in_words_and_every_cell_reads(shown):
    for d in [*shown.dataframe, *shown.table]:  # the grids, and the static tables in the expanders
        df = d.value
        assert len(df.columns) <= MOST_COLUMNS, list(df.columns)
        assert not [c for c in df.columns if "_" in c], list(df.columns)
        bad = [v for c in df.columns for v in df[c].astype(str) if BAD_CELL.search(v) or v == ""]
        assert not bad, (list(df.columns), bad[:5])
    assert len(shown.dataframe) >= 5 and len(shown.table) >= 4  # attention, topics, what-if, keys, pitfalls; details
    for c in shown.caption:
        assert not re.search(r"\bNone\b|\bnan\b|\d[eE][+-]\d", c.value), c.value


def test_each_key_is_escaped_and_shown_with_its_partition(audited, shown):
    out, base, _ = audited
    written = pq.read_table(f"{base}/top_keys").to_pylist()
    keys = next(d.value for d in shown.dataframe if "Key" in d.value.columns)
    assert list(keys.columns[:4]) == ["Topic", "Partition", "Rank", "Key"]
    assert len(keys) == len(written)
    key505 = keys[keys["Key"] == "'key-505'"]
    assert sorted(key505["Partition"]) == ["0", "1"]  # the same key twice: told apart by its partition
    assert not keys.duplicated(["Topic", "Partition", "Key"]).any()
    binary = keys[keys["Topic"] == "bin-keys"]["Key"].tolist()
    assert sorted(binary) == [f"'\\x00\\x01\\xff\\x0{n}'" for n in range(4)]  # escaped, never four boxes alike
    assert not any("\ufffd" in k for k in keys["Key"])
    obsolete = {(r["topic"], r["partition"], r["rank"]): r["obsolete_bytes"] for r in written}
    for r in keys.to_dict("records"):
        assert r["Obsolete bytes"] == units.bytes_iec(obsolete[(r["Topic"], int(r["Partition"]), int(r["Rank"]))])


def test_a_chart_is_drawn_only_with_two_points_else_a_sentence_says_why(shown):
    captions = [c.value for c in shown.caption]
    # every tombstone was written within the same minute: one bucket, no one-dot chart
    assert any(c.startswith("No chart of tombstones over time: all ") and "tombstones were written within one 1 min "
               "bucket, the one from 2023-" in c for c in captions), captions
    # cleaning what is dirty takes milliseconds: no chart of bars that are all but zero
    assert any(c.startswith("No chart of cleaning time per topic: every topic cleans in under a second (")
               for c in captions), captions
    for c in shown.get("plotly_chart"):
        spec = json.loads(c.proto.spec)
        points = {(x, y) for t in spec["data"] for x, y in zip(t.get("x", []), t.get("y", []))}
        assert len(points) >= 2, spec["layout"]["title"]
        for axis in ("xaxis", "yaxis"):
            assert spec["layout"][axis]["title"]["text"], (spec["layout"]["title"], axis)
