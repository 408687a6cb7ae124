"""Duplicates stuck in the active segment (monitor.model.activekeys), on real segment files written by
kafka-python's record builders. Expected counts come from the records the test wrote: for every key,
all its records but the last are superseded; their key and value bytes are summed here from the
records themselves."""

from __future__ import annotations

from monitor.model.activekeys import tally
from recordfixtures import control, items, v2, write


def expected(records):
    """(superseded records, their key+value bytes): every record of a key but its last one."""
    last = {}
    for i, r in enumerate(records):
        if r.key is not None:
            last[r.key] = i
    sup = [r for i, r in enumerate(records) if r.key is not None and last[r.key] != i]
    return len(sup), sum(len(r.key) + len(r.value or b"") for r in sup)


def test_duplicates_counted_and_read_on_as_the_segment_grows(tmp_path):
    first = items(range(0, 30), distinct=7, tombstone_every=5, null_key_every=11)
    path = tmp_path / "00000000000000000000.log"
    write(path, [v2(first[:12]), v2(first[12:])])
    k = tally(path, 0)
    assert k.known and k.records == 30
    assert (k.duplicate_records, k.duplicate_bytes) == expected(first)
    assert k.distinct_keys == len({r.key for r in first if r.key is not None})
    read_to = k.end_position
    assert read_to == path.stat().st_size
    # the broker appends: the next tally reads only the new bytes, and keys seen before still count
    more = items(range(30, 45), distinct=7)
    with open(path, "ab") as fh:
        fh.write(v2(more).data)
        fh.write(control(45, "COMMIT", 7, 0, 0).data)  # a marker is no record of a key
    k2 = tally(path, 0, k)
    assert k2 is k and k2.records == 45
    assert (k2.duplicate_records, k2.duplicate_bytes) == expected(first + more)


def test_a_bound_makes_the_counts_unknown_not_partial(tmp_path):
    recs = items(range(0, 40), distinct=10)
    path = tmp_path / "00000000000000000000.log"
    write(path, [v2(recs)])
    small = tally(path, 0, max_bytes=path.stat().st_size - 1)
    assert not small.known and "read for keys" in small.over_bound
    few = tally(path, 0, max_keys=5)
    assert not few.known and "more than 5 distinct keys" in few.over_bound
    assert tally(path, 0, few, max_keys=5) is few  # not read again while it is the same file
    assert tally(path, 0).known
