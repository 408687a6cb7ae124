"""The ``kafka-segments`` source's read of a copied live log dir (``sources.files``): the planning, on the
driver, knows which file of each folder is its partition's last, so a task applies the one cut-tail rule
(``reader.cut_tail_is_fault``) as the audit, the collector, ``logdir`` and ``inspect`` do."""

from __future__ import annotations

from recordfixtures import items, v2, write
from spark_analysis.sources.files import may_be_appended
from spark_analysis.sources.segments import KafkaSegmentsDataSource


def _log_dir(root, cut: dict[str, int]):
    """Two partitions of three segments each; in segment ``cut[folder]`` the second batch cut short."""
    for folder in ("t-0", "t-1"):
        for i, base in enumerate((0, 10, 20)):
            path = root / folder / f"{base:020d}.log"
            write(path, [v2(items(range(base, base + 5), "a")), v2(items(range(base + 5, base + 10), "b"))])
            if cut.get(folder) == i:
                with open(path, "r+b") as fh:
                    fh.truncate(path.stat().st_size - 7)


def _read(root) -> list[dict]:
    reader = KafkaSegmentsDataSource({"path": str(root)}).reader(None)
    return [r for part in reader.partitions() for b in reader.read(part) for r in b.to_pylist()]


def test_each_folders_last_segment_and_any_lone_file_may_be_appended():
    files = [("/d/t-0/00000000000000000000.log", 1), ("/d/t-0/00000000000000000100.log", 1),
             ("/d/t-0/00000000000000000020.log", 1), ("/d/t-1/00000000000000000000.log", 1),
             ("/d/copy.log", 1)]
    assert may_be_appended(files) == {"/d/t-0/00000000000000000100.log", "/d/t-1/00000000000000000000.log",
                                      "/d/copy.log"}


def test_a_cut_at_the_end_of_the_active_segment_is_no_fault_and_below_it_one(tmp_path):
    _log_dir(tmp_path, {"t-0": 2, "t-1": 1})
    rows = _read(tmp_path)
    faults = [(r["segment"].rsplit("/", 2)[-2:], r["fault_kind"]) for r in rows if r["fault_kind"]]
    assert faults == [(["t-1", "00000000000000000010.log"], "truncated")]
    records = {(r["partition"], r["offset"]) for r in rows if r["fault_kind"] is None}
    # the whole batches are rows in both cases; a cut batch is none (the next read takes it up)
    assert records == {(0, o) for o in range(25)} | {(1, o) for o in [*range(15), *range(20, 30)]}
