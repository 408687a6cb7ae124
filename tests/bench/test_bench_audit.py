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


def test_a_first_batch_larger_than_64_kib_is_taken_whole(tmp_path):
    from bench.bench_audit import TINY_BYTES, tiny_input

    src = rf.write(tmp_path / "data" / "t-0" / "00000000000000000000.log",
                   [rf.v2(rf.items(range(0, 3000)), "none"), rf.v2(rf.items(range(3000, 3010)), "none")])
    first = _batches(src.path)[0]
    assert first[2] > TINY_BYTES
    [(uri, size)] = tiny_input([(str(src.path), src.path.stat().st_size)], tmp_path / "tiny")
    assert _batches(uri) == [first] and size == first[2]
