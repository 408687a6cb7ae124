"""The Audit page's replicas (#22): a real audit (local Spark) of one partition found in two log dirs, one
replica lagging (two of the other's three batches), shows what the totals count and the replica
table, the disagreeing replica first; a one-log-dir run shows the totals line and no replica table."""

from __future__ import annotations

import pandas as pd
import pytest

from dashpages import page
from monitor.contract import units
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
    assert f"Totals count {R.COUNTED}; every replica read holds {units.bytes_iec(both)} on disk." in \
        [c.value for c in at.caption]
    assert "Replicas" in [h.value for h in at.subheader]
    # the replica, whether it is the audited one and how it disagrees first; offsets and sizes in the expander
    grids = [d.value for d in [*at.dataframe, *at.table] if "Log dir" in d.value.columns]
    got = pd.concat([g.drop(columns=["Topic", "Partition"]) if i else g for i, g in enumerate(grids)], axis=1)
    got = got.loc[:, ~got.columns.duplicated()][["Partition", "Log dir", "Audited", "Chosen by", "Log end offset",
                                                  "Size", "Segments", "Offsets behind", "Disagreement"]]
    assert got.to_dict("records") == [
        {"Partition": "0", "Log dir": str(tmp / "logs" / "b2"), "Audited": "no", "Chosen by": R.BY_END,
         "Log end offset": "4", "Size": units.bytes_iec(lagging.stat().st_size), "Segments": "1",
         "Offsets behind": "2", "Disagreement": R.BEHIND},
        {"Partition": "0", "Log dir": str(tmp / "logs" / "b1"), "Audited": "yes", "Chosen by": R.BY_END,
         "Log end offset": "6", "Size": units.bytes_iec(full.stat().st_size), "Segments": "1",
         "Offsets behind": "0", "Disagreement": "none"}]
    assert {m.label: m.value for m in at.metric}["Scanned"] == units.bytes_iec(full.stat().st_size)


def test_one_log_dir_shows_the_totals_line_and_no_replica_table(runs, monkeypatch):
    tmp, full, _ = runs
    at = page("audit", monkeypatch, audit_dir=tmp / "one")
    assert f"Totals count {R.COUNTED}; every replica read holds {units.bytes_iec(full.stat().st_size)} on disk." in \
        [c.value for c in at.caption]
    assert "Replicas" not in [h.value for h in at.subheader]
    assert not any("Disagreement" in d.value.columns for d in at.dataframe)
