"""``monitor.model.summary`` headers first: a header pass (``scan_headers``) and the record pass after it
(``read_detail``) give, field by field, the summary one whole read (``summarize``) gives: with
transactions (a commit, an abort, an open one), compressed batches, tombstones, keyless and empty values;
after an append; when the record pass stops mid-segment; and when a batch's CRC fails (which headers
cannot see: the segment is then read again whole)."""

from __future__ import annotations

import dataclasses

from monitor.model.summary import read_detail, scan_headers, summarize
from recordfixtures import Rec, T0, control, v2, write


def _batches(start: int, n: int, per: int = 200, pid: int = -1, txn: bool = False, codec: str = "none"):
    out, o = [], start
    for b in range(n):
        recs = [Rec(o + i, T0 + o + i, None if (o + i) % 13 == 0 else f"k{(o + i) % 50}".encode(),
                    None if (o + i) % 7 == 0 else (b"" if (o + i) % 11 == 0 else b"x" * 300)) for i in range(per)]
        out.append(v2(recs, codec, producer_id=pid, producer_epoch=0 if pid >= 0 else -1,
                      base_sequence=0 if pid >= 0 else -1, transactional=txn))
        o += per
    return out, o


def _log(path):
    a, o = _batches(0, 3)
    b, o = _batches(o, 2, pid=7, txn=True)
    c1 = control(o, "COMMIT", 7, 0, T0 + o)
    d, o = _batches(o + 1, 1, pid=8, txn=True, codec="gzip")
    c2 = control(o, "ABORT", 8, 0, T0 + o)
    e, o = _batches(o + 1, 2, pid=9, txn=True)  # left open
    return write(path, [*a, *b, c1, *d, c2, *e]), o


def _same(a, b):
    assert dataclasses.asdict(a) == dataclasses.asdict(b)


def test_headers_then_records_equal_a_whole_read(tmp_path):
    seg, _ = _log(tmp_path / "00000000000000000000.log")
    whole, _ = summarize(seg.path, 0)
    assert whole.tombstones and whole.keyless_records and whole.empty_value_records and whole.txn_aborts
    s, header_bytes = scan_headers(seg.path, 0)
    assert header_bytes < whole.size / 5  # pages of headers, not the records
    assert not s.detail_done and s.detail_pending_bytes == whole.size and s.tombstones == 0
    for name in ("batches", "records", "next_offset", "first_batch_max_timestamp", "max_timestamp",
                 "control_records", "transactional_batches", "txn_markers", "txn_runs", "txn_aborts", "end_position"):
        assert getattr(s, name) == getattr(whole, name), name
    s, read = read_detail(s)
    assert read == whole.size and s.detail_done
    _same(s, whole)


def test_a_record_pass_stopped_mid_segment_goes_on_from_there(tmp_path):
    seg, _ = _log(tmp_path / "00000000000000000000.log")
    whole, _ = summarize(seg.path, 0)
    s, _ = scan_headers(seg.path, 0)
    s, first = read_detail(s, stop=lambda: True)  # one batch, then stop
    assert 0 < first < whole.size and s.detail_position == first and not s.detail_done
    taken = []
    s, rest = read_detail(s, take=taken.append)
    assert first + rest == whole.size == first + sum(taken)
    _same(s, whole)


def test_an_appended_segment_gets_headers_for_the_new_bytes_then_records(tmp_path):
    path = tmp_path / "00000000000000000000.log"
    seg, o = _log(path)
    s, _ = scan_headers(path, 0)
    s, _ = read_detail(s)
    more, _ = _batches(o, 2)
    with open(path, "ab") as f:
        f.write(b"".join(b.data for b in more))
    s, _ = scan_headers(path, 0, s)
    assert s.detail_pending_bytes == sum(len(b.data) for b in more)
    s, _ = read_detail(s)
    _same(s, summarize(path, 0)[0])


def test_a_batch_whose_crc_fails_is_found_by_the_record_pass_and_the_segment_read_whole(tmp_path):
    path = tmp_path / "00000000000000000000.log"
    seg, _ = _log(path)
    data = bytearray(path.read_bytes())
    second = len(seg.batches[0].data)
    data[second + 200] ^= 0xFF  # a record byte of the second batch: its header is intact
    path.write_bytes(bytes(data))
    whole, _ = summarize(path, 0)
    assert any("CRC" in f for f in whole.faults)
    s, _ = scan_headers(path, 0)
    assert not s.faults and s.batches == whole.batches + 1  # the header pass cannot see it
    s, _ = read_detail(s)
    _same(s, whole)
