"""The summary cache's bytes (monitor.model.summarystore): what a restart trusts must come back equal to
what was read, and anything that is not the file this version wrote must be refused with its reason,
never decoded into summaries. Summaries of real segment files (tests/recordfixtures.py): tombstones,
transactions, aborts, keyless records, a fault."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import zlib

import pytest

from monitor.kafka.offsetgroups import read_segment
from monitor.model import summarystore as S
from monitor.model.activekeys import tally
from monitor.model.summary import SegmentSummary, summarize
from recordfixtures import gallery, items, v2, write


def summaries(tmp_path):
    return [summarize(seg.path, 0)[0] for seg in gallery(tmp_path).values()]


def file_bytes(entries, **meta) -> bytes:
    return b"".join(S.encode(entries, meta))


def test_summaries_and_commits_come_back_equal(tmp_path):
    got = summaries(tmp_path)
    assert any(s.tombstones for s in got) and any(s.txn_markers for s in got) and any(s.txn_aborts for s in got)
    assert any(s.faults for s in got) and any(s.keyless_records for s in got)
    seg = write(tmp_path / "__consumer_offsets-0" / "00000000000000000000.log",
                [v2(items(range(0, 6), prefix="\x00\x01g", tombstone_every=3))])
    commits = read_segment(seg.path)[0]
    head, back = S.decode(file_bytes(got + [commits], broker="1"))
    assert back == got + [commits] and head["broker"] == "1" and head["entries"] == len(got) + 1
    assert commits.latest and [type(x.tombstone_offsets) for x in back[:-1]] == [type(x.tombstone_offsets) for x in got]


def test_active_segment_keys_come_back_equal_as_arrays_and_over_bound_without_keys(tmp_path):
    """An active segment's key state (monitor.model.activekeys) is cached too: its keys' hashes and sizes
    come back equal; one over a bound comes back over it, with no keys."""
    seg = write(tmp_path / "t-0" / "00000000000000000000.log",
                [v2(items(range(0, 40), distinct=12, tombstone_every=5)), v2(items(range(40, 60), distinct=12))])
    keys = tally(seg.path, 0)
    over = tally(seg.path, 0, max_keys=3)
    assert len(keys._latest) == 12 and keys.duplicate_records == 48 and keys.tail_position > 0
    assert over.over_bound and over._latest == {}
    data = file_bytes([keys, over])
    _, back = S.decode(data)
    assert back == [keys, over] and back[0]._latest == keys._latest and back[1].over_bound == over.over_bound
    assert len(data) < 600  # 16 bytes a key, base64 and zlib: no JSON pair per key


def test_another_field_is_another_version():
    """A field added to SegmentSummary (another helper's, say) changes the version: an old cache is refused."""
    @dataclasses.dataclass
    class Wider(SegmentSummary):
        headers_only: bool = False

    wider = {**S.KINDS, "s": Wider}
    assert S.version(wider) != S.VERSION
    assert S.version(fmt=S.FORMAT + 1) != S.VERSION
    assert S.version() == S.VERSION  # a digest of the types, stable between runs


def test_a_type_without_a_codec_fails_at_once():
    with pytest.raises(TypeError, match="no cache codec"):
        S.codec(set[int])


def rewrite_header(data: bytes, **changes) -> bytes:
    """The file as another writer would have made it: header changed, digest made right again."""
    end = data.index(b"\n", len(S.MAGIC))
    head = {**json.loads(data[len(S.MAGIC):end]), **changes}
    body = S.MAGIC + json.dumps(head, sort_keys=True).encode() + b"\n" + data[end + 1:-S.DIGEST]
    return body + hashlib.sha256(body).digest()


@pytest.mark.parametrize("case, reason", [
    ("other version", "version"), ("other format", "version"), ("truncated", "truncated"),
    ("cut in the mark", "truncated"), ("payload edited", "checksum"), ("header edited", "checksum"),
    ("bytes appended", "checksum"), ("foreign", "foreign"), ("empty", "truncated"), ("sound digest, bad entry", "malformed"),
])
def test_what_is_not_this_versions_file_is_refused_with_the_reason(tmp_path, case, reason):
    good = file_bytes(summaries(tmp_path))
    data = {
        "other version": lambda: rewrite_header(good, version="0123456789abcdef"),
        "other format": lambda: rewrite_header(good, format=S.FORMAT + 1),
        "truncated": lambda: good[:len(good) // 2],
        "cut in the mark": lambda: good[:5],
        "payload edited": lambda: good[:-40] + bytes([good[-40] ^ 1]) + good[-39:],
        "header edited": lambda: good.replace(b'"entries": ', b'"entries":  ', 1),
        "bytes appended": lambda: good + b"\n",
        "foreign": lambda: bytes(v2(items(range(3))).data),  # a Kafka record batch where the cache should be
        "empty": lambda: b"",
        "sound digest, bad entry": lambda: _with_payload(b'["s","p",1]\n'),
    }[case]()
    with pytest.raises(S.CacheRejected) as exc:
        S.decode(data)
    assert exc.value.reason == reason and exc.value.reason in S.REJECTED


def _with_payload(lines: bytes) -> bytes:
    """A file with a right digest around entries that do not decode (a writer's bug)."""
    payload = zlib.compress(lines)
    head = {"format": S.FORMAT, "version": S.VERSION, "entries": lines.count(b"\n"), "payload_bytes": len(payload)}
    body = S.MAGIC + json.dumps(head, sort_keys=True).encode() + b"\n" + payload
    return body + hashlib.sha256(body).digest()
