"""Every kind of bad segment bytes gives a typed error naming file and byte position,
after every valid batch before it; ``skip_corrupt`` goes on where the length can be trusted.

The bytes are three v2 batches made by kafka-python's record builder (tests/recordfixtures.py),
offsets 0..5, with one fault injected each; random bytes come from a seeded generator (the ``seed``
fixture: printed when a test fails)."""

from __future__ import annotations

import os
import random
import struct

import pytest

from clirun import run_cli
from monitor.kafka.record import (
    CorruptBatchError,
    CrcMismatchError,
    RecordFormatError,
    SegmentReader,
    TruncatedBatchError,
    UnknownMagicError,
    ZeroFillError,
    read_segment,
)

from recordfixtures import three_v2_batches

@pytest.fixture
def good(tmp_path):
    """The bytes of three v2 batches (gzip, none, gzip; two records each) and the batch sizes."""
    seg = three_v2_batches(tmp_path / "source" / "00000000000000000000.log")
    data = seg.path.read_bytes()
    sizes = [len(w.data) for w in seg.batches]
    assert [b.size for b in SegmentReader(seg.path).batches()] == sizes and sum(sizes) == len(data)
    return data, sizes


def _write(tmp_path, data: bytes, name="00000000000000000000.log"):
    p = tmp_path / name
    p.write_bytes(data)
    return p


def test_truncated_last_batch(tmp_path, good):
    data, sizes = good
    p = _write(tmp_path, data[:-7])
    reader = SegmentReader(p)
    got = []
    with pytest.raises(TruncatedBatchError) as exc:
        for b in reader.batches():
            got.append(b)
    assert len(got) == 2
    assert exc.value.position == sizes[0] + sizes[1] and exc.value.file == str(p)
    assert f"byte {sizes[0] + sizes[1]}" in str(exc.value)


def test_truncated_inside_header(tmp_path, good):
    data, sizes = good
    p = _write(tmp_path, data[: sizes[0] + 9])
    reader = SegmentReader(p, skip_corrupt=True)
    assert len(list(reader.records())) == 2
    assert [type(f) for f in reader.faults] == [TruncatedBatchError]
    assert reader.faults[0].position == sizes[0]


def test_wrong_crc_is_skipped_and_reading_goes_on(tmp_path, good):
    data, sizes = good
    bad = bytearray(data)
    bad[sizes[0] + 70] ^= 0xFF  # a byte in the second batch's records
    p = _write(tmp_path, bytes(bad))
    with pytest.raises(CrcMismatchError) as exc:
        read_segment(p)
    assert exc.value.position == sizes[0]
    reader = SegmentReader(p, skip_corrupt=True)
    recs = list(reader.records())
    assert len(recs) == 4  # first and third batches: 2 + 2 records
    assert reader.batches_skipped == 1 and reader.faults[0].position == sizes[0]


def test_crc_check_can_be_turned_off(tmp_path, good):
    data, sizes = good
    bad = bytearray(data)
    struct.pack_into(">I", bad, 17, 12345)  # the first batch's stored CRC
    p = _write(tmp_path, bytes(bad))
    assert len(read_segment(p, verify_crc=False)) == 6


def test_batch_length_past_end_of_file(tmp_path, good):
    data, sizes = good
    bad = bytearray(data)
    struct.pack_into(">i", bad, sizes[0] + 8, 10_000_000)
    p = _write(tmp_path, bytes(bad))
    reader = SegmentReader(p, skip_corrupt=True)
    assert len(list(reader.records())) == 2
    f = reader.faults[0]
    assert isinstance(f, TruncatedBatchError) and f.position == sizes[0] and "runs past the end" in f.reason


def test_zero_filled_tail(tmp_path, good):
    data, sizes = good
    p = _write(tmp_path, data + b"\x00" * 4096)
    with pytest.raises(ZeroFillError) as exc:
        read_segment(p)
    assert exc.value.position == len(data) and "4096 zero bytes" in exc.value.reason
    reader = SegmentReader(p, skip_corrupt=True)
    assert len(list(reader.records())) == 6 and len(reader.faults) == 1


def test_garbage(tmp_path, seed):
    rnd = random.Random(seed)
    p = _write(tmp_path, rnd.randbytes(16) + b"\x07" + rnd.randbytes(500))
    with pytest.raises(RecordFormatError) as exc:
        read_segment(p)
    assert exc.value.position == 0 and exc.value.file == str(p)


def test_garbage_with_plausible_header(tmp_path, good, seed):
    data, sizes = good
    bad = bytearray(data[: sizes[0]])
    bad[61:] = random.Random(seed).randbytes(len(bad) - 61)  # records scrambled, header intact: CRC catches it
    p = _write(tmp_path, bytes(bad))
    with pytest.raises(CrcMismatchError):
        read_segment(p)


def test_records_that_do_not_parse_behind_a_valid_crc(tmp_path, good):
    """A batch whose CRC is recomputed over nonsense records: the decoder must catch it."""
    from crc32c import crc32c

    data, sizes = good
    plain = bytearray(data[sizes[0]: sizes[0] + sizes[1]])  # batch 2 is uncompressed
    assert plain[22] & 0x07 == 0
    plain[61:] = b"\x7f" * (len(plain) - 61)
    struct.pack_into(">I", plain, 17, crc32c(bytes(plain[21:])))
    p = _write(tmp_path, bytes(plain))
    reader = SegmentReader(p, skip_corrupt=True)
    assert list(reader.records()) == []
    assert isinstance(reader.faults[0], CorruptBatchError) and reader.faults[0].position == 0
    with pytest.raises(CorruptBatchError):
        list(SegmentReader(p).records())


def test_unknown_magic(tmp_path, good):
    data, sizes = good
    bad = bytearray(data)
    bad[sizes[0] + 16] = 9
    p = _write(tmp_path, bytes(bad))
    reader = SegmentReader(p, skip_corrupt=True)
    assert len(list(reader.records())) == 2
    f = reader.faults[0]
    assert isinstance(f, UnknownMagicError) and f.position == sizes[0] and "magic byte 9" in f.reason


def test_empty_file_has_no_batches(tmp_path):
    p = _write(tmp_path, b"")
    reader = SegmentReader(p)
    assert list(reader.records()) == [] and not reader.faults


def test_unreadable_paths(tmp_path):
    with pytest.raises(RecordFormatError) as exc:
        read_segment(tmp_path / "missing.log")
    assert "missing.log" in str(exc.value) and "cannot read" in str(exc.value)
    with pytest.raises(RecordFormatError):
        read_segment(tmp_path)  # a directory


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_permission_denied(tmp_path, good):
    p = _write(tmp_path, good[0])
    p.chmod(0)
    with pytest.raises(RecordFormatError, match="cannot read"):
        read_segment(p)


def test_reading_from_a_stream_and_a_start_position(tmp_path, good):
    import io

    data, sizes = good
    assert len(list(SegmentReader(io.BytesIO(data), name="mem").records())) == 6
    assert [r.offset for r in SegmentReader(_write(tmp_path, data), start=sizes[0]).records()] == [2, 3, 4, 5]


def test_inspect_exits_nonzero_and_counts_skipped(tmp_path, good):
    data, sizes = good
    bad = bytearray(data)
    bad[sizes[0] + 70] ^= 0xFF
    p = _write(tmp_path, bytes(bad) + b"\x00" * 100)
    proc = run_cli("inspect", "--format", "jsonl", str(p))
    assert proc.returncode == 1
    assert len(proc.stdout.splitlines()) == 4
    assert "skipped 2 batch(es)" in proc.stderr
    assert f"{p}: byte {sizes[0]}" in proc.stderr


def _negative_count(data: bytes, sizes, count: int = -3) -> bytes:
    """The second batch (uncompressed) with its header's record count set to ``count`` and the CRC-32C
    recomputed, so only the count is wrong (offset 57: DefaultRecordBatch.RECORDS_COUNT_OFFSET)."""
    from crc32c import crc32c

    b = bytearray(data)
    start = sizes[0]
    struct.pack_into(">i", b, start + 57, count)
    struct.pack_into(">I", b, start + 17, crc32c(bytes(b[start + 21: start + sizes[1]])))
    return bytes(b)


def test_negative_record_count_is_a_read_fault_not_zero_records(tmp_path, good):
    """Kafka's DefaultRecordBatch.RecordIterator throws InvalidRecordException ("Found invalid record
    count") for a negative count; so does the reader, with the CRC valid, bodies read or not."""
    data, sizes = good
    p = _write(tmp_path, _negative_count(data, sizes))
    for bodies in (True, False):
        with pytest.raises(CorruptBatchError) as exc:
            list(SegmentReader(p).batches(bodies=bodies))
        assert exc.value.position == sizes[0] and "negative record count -3" in str(exc.value)
    reader = SegmentReader(p, skip_corrupt=True)
    assert [r.offset for r in reader.records()] == [0, 1, 4, 5]  # the batches either side still read
    assert reader.batches_skipped == 1
    proc = run_cli("inspect", "--format", "jsonl", str(p))
    assert proc.returncode == 1 and f"{p}: byte {sizes[0]}" in proc.stderr and "negative record count" in proc.stderr


@pytest.mark.slow  # compresses 64 MiB of zeros and inflates it twice: half a second of CPU, in-process or not
def test_a_decompression_bomb_is_a_read_fault(tmp_path, good):
    """A zstd batch of a few KiB that inflates to 64 MiB of zeros (a valid CRC over it): the records
    do not parse, so the batch is a fault naming file and byte, and inspect exits 1. (64 MiB is under
    the bound, monitor.kafka.readbound.MAX_BATCH_BYTES: a bomb past it is tests/monitor/kafka/test_readbound.py's.)"""
    import cramjam
    from crc32c import crc32c

    data, sizes = good
    b = bytearray(data[: 61]) + bytes(cramjam.zstd.compress(b"\0" * (64 << 20), 19))
    struct.pack_into(">i", b, 8, len(b) - 12)  # batch length
    struct.pack_into(">h", b, 21, 4)  # attributes: zstd
    struct.pack_into(">I", b, 17, crc32c(bytes(b[21:])))
    p = _write(tmp_path, bytes(b))
    with pytest.raises(CorruptBatchError) as exc:
        list(SegmentReader(p).records())
    assert exc.value.position == 0
    proc = run_cli("inspect", str(p))
    assert proc.returncode == 1 and f"{p}: byte 0" in proc.stderr
