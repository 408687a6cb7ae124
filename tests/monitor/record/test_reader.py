"""Header-only scans answer size and offset questions without touching record data."""

from monitor.record import SegmentReader


def test_header_scan_matches_full_read(corpus):
    path = corpus / "kafkajs-fetch-fixtures" / "v4_response_mixed_formats__test-mixed-message-formats-0.records.bin"
    full = [(b.position, b.size, b.last_offset) for b in SegmentReader(path).batches()]
    cheap = [(b.position, b.size, b.last_offset) for b in SegmentReader(path).batches(bodies=False)]
    assert full == cheap and len(full) > 1000


def test_header_scan_does_not_decompress(corpus):
    path = corpus / "kafka-go-fetch-fixtures" / "v2c-v2c__test-oneiric-0.records.bin"
    batches = list(SegmentReader(path).batches(bodies=False))
    assert {b.compression for b in batches} == {"gzip"}
    assert all(b._body is None for b in batches)
