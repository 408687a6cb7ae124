"""A grown segment's prefix checked by its last batch's header (monitor.model.tailcheck), on real segment
files (tests/recordfixtures.py): still there after the broker appended; not after a truncation in place
(Kafka's LogSegment.truncateTo on a leader change) and other batches written past the old size."""

from __future__ import annotations

from monitor.model.activekeys import tally
from monitor.model.summary import summarize
from monitor.model.tailcheck import CHECK_BYTES, NO_TAIL, intact
from monitor.kafka.record import SegmentReader
from recordfixtures import items, legacy, v2, write


def regrow(path, records) -> None:
    """Truncated to 0 in place (the same inode) and written again past the old size."""
    with open(path, "r+b") as fh:
        fh.truncate(0)
        fh.write(b"".join(b.data for b in records))


def test_appended_is_intact_regrown_is_not(tmp_path):
    path = tmp_path / "00000000000000000000.log"
    write(path, [v2(items(range(0, 5), distinct=3)), v2(items(range(5, 9), distinct=3))])
    s, _ = summarize(path, 0)
    last = list(SegmentReader(path).batches())[-1]
    assert (s.tail_position, s.tail_crc, s.end_position) == (last.position, last.crc, path.stat().st_size)
    with open(path, "ab") as fh:
        fh.write(v2(items(range(9, 12), distinct=3)).data)
    assert intact(path, s.tail_position, s.tail_crc, s.end_position) == (True, CHECK_BYTES)
    regrow(path, [v2(items(range(0, 5), distinct=3)), v2(items(range(5, 9), distinct=4)),
                  v2(items(range(9, 20), distinct=3))])
    assert not intact(path, s.tail_position, s.tail_crc, s.end_position)[0]
    assert intact(path, NO_TAIL, 0, 0) == (True, 0)  # nothing read before: every byte is new
    assert not intact(tmp_path / "gone.log", s.tail_position, s.tail_crc, s.end_position)[0]


def test_a_regrown_segment_is_read_again_whole_by_summary_and_keys(tmp_path):
    path = tmp_path / "00000000000000000000.log"
    write(path, [v2(items(range(0, 6), distinct=2))])
    s, _ = summarize(path, 0)
    k = tally(path, 0)
    regrow(path, [v2(items(range(0, 4), distinct=4)), v2(items(range(4, 12), distinct=5, tombstone_every=3))])
    again, read = summarize(path, 0, s)
    keys = tally(path, 0, k)
    fresh, _ = summarize(path, 0)
    assert again == fresh and read == path.stat().st_size + CHECK_BYTES
    assert keys is not k and keys == tally(path, 0)


def test_a_legacy_message_tail_is_checked_by_its_crc(tmp_path):
    path = tmp_path / "00000000000000000000.log"
    write(path, legacy(1, items(range(0, 3), distinct=2)))
    s, _ = summarize(path, 0)
    with open(path, "ab") as fh:
        fh.write(b"".join(b.data for b in legacy(1, items(range(3, 5), distinct=2))))
    assert intact(path, s.tail_position, s.tail_crc, s.end_position)[0]
    regrow(path, legacy(1, items(range(0, 8), distinct=5, tombstone_every=2)))
    assert not intact(path, s.tail_position, s.tail_crc, s.end_position)[0]
