"""The Audit page's replicas (#22): a real audit (local Spark) of one partition found in two log dirs, one
replica lagging (two of the other's three batches), shows what the totals count and the replica
table, the disagreeing replica first; a one-log-dir run shows the totals line and no replica table."""

from __future__ import annotations

import pytest

from dashpages import page
from recordfixtures import items, three_v2_batches, v2, write
from spark_analysis import replicas as R

pytestmark = pytest.mark.slow  # one real Spark audit


@pytest.fixture(scope="module")
def runs(_spark_sessions, tmp_path_factory):
    """Two audit output folders: ``two`` over log dirs b1 (offsets 0..5) and b2 (0..3, the same first two
    batches), ``one`` over b1 alone; and the segment files."""
    spark = _spark_sessions.get(kafka_source=False)
    from spark_analysis.job import build_parser, run

    tmp = tmp_path_factory.mktemp("replicas-page")
    full = tmp / "logs" / "b1" / "orders-0" / "00000000000000000000.log"
    three_v2_batches(full)
    lagging = tmp / "logs" / "b2" / "orders-0" / "00000000000000000000.log"
    write(lagging, [v2(items(range(0, 2)), "gzip"), v2(items(range(2, 4)))])
    for name, inputs in (("two", [tmp / "logs"]), ("one", [tmp / "logs" / "b1"])):
        argv = [a for i in inputs for a in ("--input", str(i))] + ["--out", str(tmp / name)]
        run(build_parser().parse_args(argv), spark=spark)
    return tmp, full, lagging


def test_the_replica_table_lists_the_lagging_replica_first(runs, monkeypatch):
    tmp, full, lagging = runs
    at = page("audit", monkeypatch, audit_dir=tmp / "two")
    both = full.stat().st_size + lagging.stat().st_size
    assert f"Totals count {R.COUNTED}; every replica read holds {both / 2**20:,.1f} MiB on disk." in \
        [c.value for c in at.caption]
    assert "Replicas" in [h.value for h in at.subheader]
    table = next(d.value for d in at.dataframe if "disagreement" in d.value.columns)
    got = table[["log_dir", "audited", "chosen_by", "log_end_offset", "bytes", "segments", "offsets_behind",
                 "disagreement"]].to_dict("records")
    assert got == [
        {"log_dir": str(tmp / "logs" / "b2"), "audited": False, "chosen_by": R.BY_END, "log_end_offset": 4,
         "bytes": lagging.stat().st_size, "segments": 1, "offsets_behind": 2, "disagreement": R.BEHIND},
        {"log_dir": str(tmp / "logs" / "b1"), "audited": True, "chosen_by": R.BY_END, "log_end_offset": 6,
         "bytes": full.stat().st_size, "segments": 1, "offsets_behind": 0, "disagreement": ""}]
    assert {m.label: m.value for m in at.metric}["Scanned"] == f"{full.stat().st_size / 2**20:,.1f} MiB"


def test_one_log_dir_shows_the_totals_line_and_no_replica_table(runs, monkeypatch):
    tmp, full, _ = runs
    at = page("audit", monkeypatch, audit_dir=tmp / "one")
    assert f"Totals count {R.COUNTED}; every replica read holds {full.stat().st_size / 2**20:,.1f} MiB on disk." in \
        [c.value for c in at.caption]
    assert "Replicas" not in [h.value for h in at.subheader]
    assert not any("disagreement" in d.value.columns for d in at.dataframe)
