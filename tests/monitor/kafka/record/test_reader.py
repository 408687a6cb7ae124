"""Header-only scans answer size and offset questions without touching record data."""

from monitor.kafka.record import SegmentReader
from recordfixtures import items, many_batches, v2, write


def test_header_scan_matches_full_read(tmp_path, seed):
    seg = many_batches(tmp_path / "00000000000000000000.log", legacy_messages=1200, v2_batches=3, seed=seed)
    expected = [(pos, len(w.data), w.last_offset) for w, pos in zip(seg.batches, seg.positions)]
    full = [(b.position, b.size, b.last_offset) for b in SegmentReader(seg.path).batches()]
    cheap = [(b.position, b.size, b.last_offset) for b in SegmentReader(seg.path).batches(bodies=False)]
    assert full == cheap == expected and len(expected) == 1203


def test_header_scan_does_not_decompress(tmp_path):
    seg = write(tmp_path / "00000000000000000000.log", [v2(items(range(0, 2)), "gzip"), v2(items(range(2, 4)), "gzip")])
    batches = list(SegmentReader(seg.path).batches(bodies=False))
    assert [(b.compression, b.base_offset, b.last_offset) for b in batches] == [("gzip", 0, 1), ("gzip", 2, 3)]
    assert all(b._body is None for b in batches)
