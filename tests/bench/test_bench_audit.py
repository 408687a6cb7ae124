"""``./dev bench audit``'s fixed-cost input (``tiny_input``): the first whole batches of a data set's first
segment, up to 64 KiB, in a folder of the same topic-partition name, so the audit reads it as a partition
of one segment with nothing cut."""

from __future__ import annotations

import recordfixtures as rf
from monitor.kafka.record import SegmentReader


def _batches(path):
    with open(path, "rb") as fh:
        reader = SegmentReader(fh, name=str(path))
        out = [(b.base_offset, b.last_offset, b.size) for b in reader.batches()]
        assert not reader.log_faults(active=False)
    return out


def test_the_tiny_input_is_the_first_whole_batches_up_to_64_kib(tmp_path):
    from bench.bench_audit import TINY_BYTES, tiny_input

    src = rf.write(tmp_path / "data" / "audit-lz4-3" / "00000000000000000000.log",
                   [rf.v2(rf.items(range(k * 400, k * 400 + 400)), "none") for k in range(6)])
    listed = [(str(src.path), src.path.stat().st_size)]
    whole = _batches(src.path)
    assert whole[0][2] < TINY_BYTES < sum(s for _, _, s in whole)  # the data is larger than the cut
    [(uri, size)] = tiny_input(listed, tmp_path / "tiny")
    assert uri == str(tmp_path / "tiny" / "audit-lz4-3" / "00000000000000000000.log")
    got = _batches(uri)
    assert got == whole[:len(got)] and size == sum(s for _, _, s in got) <= TINY_BYTES
    assert size + whole[len(got)][2] > TINY_BYTES  # as many whole batches as fit


def test_a_first_batch_larger_than_64_kib_is_taken_whole_past_an_empty_segment(tmp_path):
    """The first segment a clean left empty is passed over; a first batch above 64 KiB is taken whole."""
    from bench.bench_audit import TINY_BYTES, tiny_input

    empty = rf.write(tmp_path / "data" / "t-0" / "00000000000000000000.log", [])
    src = rf.write(tmp_path / "data" / "t-0" / "00000000000000003000.log",
                   [rf.v2(rf.items(range(3000, 6000)), "none"), rf.v2(rf.items(range(6000, 6010)), "none")])
    first = _batches(src.path)[0]
    assert first[2] > TINY_BYTES
    listed = [(str(empty.path), 0), (str(src.path), src.path.stat().st_size)]
    [(uri, size)] = tiny_input(listed, tmp_path / "tiny")
    assert uri.endswith("t-0/00000000000000003000.log") and _batches(uri) == [first] and size == first[2]
