"""The summary cache's bytes (monitor.model.summarystore): what a restart trusts must come back equal to
what was read, and anything that is not the file this version wrote must be refused with its reason,
never decoded into summaries. Summaries of real segment files (tests/recordfixtures.py): tombstones,
transactions, aborts, keyless records, a fault."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import zlib
from array import array

import pytest

from monitor.kafka.offsetgroups import read_segment
from monitor.model import summarystore as S
from monitor.model.activekeys import tally
from monitor.model.summary import NO_ARRAY, NO_DICT, NO_LIST, SegmentSummary, add_tombstone, own, summarize
from monitor.model.transactions import TxnEvent
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
    # decoded packed (two arrays, 16 B a key), a dict only once the tally reads on: then a fresh tally's figures
    assert back[0]._latest._dict is None and len(back[0]._latest) == 12
    with open(seg.path, "ab") as fh:
        fh.write(v2(items(range(60, 70), distinct=12)).data)
    on, fresh = tally(seg.path, 0, back[0]), tally(seg.path, 0)
    assert on is back[0] and on._latest._dict is not None
    assert (on.records, on.duplicate_records, on.duplicate_bytes, on._latest) == (
        fresh.records, fresh.duplicate_records, fresh.duplicate_bytes, fresh._latest)


def every_field_set() -> SegmentSummary:
    """A summary whose every field holds a value of its own (none its default), by the fields' types: a field
    added later is set here too."""
    s = SegmentSummary("/d/t-0/00000000000000000100.log", 100)
    hints = {f.name: f.type for f in dataclasses.fields(SegmentSummary)}
    for i, f in enumerate(dataclasses.fields(SegmentSummary)):
        n = 1_700_000_000_000 + i  # past the small ints Python caches: each its own value
        t = str(hints[f.name])
        if f.name in ("path", "base_offset"):
            continue
        value = {"int": n, "bool": True, "str": f"text {i}", "int | None": n, "list[str]": [f"fault {i}", "second"],
                 "array": array("q", [n, -1, 7]), "dict[int, int]": {n: 5, 3: n},
                 "dict[int, TxnEvent]": {n: TxnEvent(n, 3, n + 1, n + 9, 1, n - 5)}}[t]
        setattr(s, f.name, value)
    return s


def test_every_field_of_a_summary_comes_back_equal_through_the_cache_file(tmp_path):
    """Every field, set to a value of its own, comes back equal through the bytes and a state file (its type and
    an array's typecode too); a summary whose containers are empty comes back holding the shared empties (as a
    cold read leaves it: no container of its own a segment), and a write into one decoded so takes its own."""
    from collectors.logdirs.summary_state import SummaryState

    full, bare = every_field_set(), SegmentSummary("/d/t-0/00000000000000000000.log", 0, size=5, next_offset=0)
    assert all(getattr(full, f.name) != f.default_factory() for f in dataclasses.fields(SegmentSummary)
               if f.default_factory is not dataclasses.MISSING)
    state = SummaryState(tmp_path, "c.cache")
    assert state.save([full, bare])
    _, back = S.decode((tmp_path / "c.cache").read_bytes())
    for f in dataclasses.fields(SegmentSummary):
        for was, got in zip((full, bare), back):
            a, b = getattr(was, f.name), getattr(got, f.name)
            assert a == b and type(a) is type(b) and getattr(a, "typecode", None) == getattr(b, "typecode", None), \
                f.name
    got_bare = back[1]
    assert got_bare.tombstone_rows is NO_ARRAY and got_bare.txn_runs is NO_DICT and got_bare.faults is NO_LIST
    own(got_bare, "faults").append("a fault")
    add_tombstone(got_bare, 3, 4, 5)
    assert got_bare.faults == ["a fault"] and list(got_bare.tombstone_offsets) == [3] and got_bare.tombstones == 1
    assert NO_LIST == [] and len(NO_ARRAY) == 0 and SegmentSummary("x", 0).faults is NO_LIST


def test_a_payload_is_decoded_a_chunk_at_a_time_whole_lines_only(tmp_path):
    """The payload inflated a chunk at a time (``S.CHUNK``): a line longer than a chunk (an active segment's
    many keys) comes back whole; a stream cut short, or with bytes after its end, is refused, never decoded."""
    seg = write(tmp_path / "t-0" / "00000000000000000000.log", [v2(items(range(0, 6000), distinct=6000))])
    keys = tally(seg.path, 0)
    entries = [*summaries(tmp_path), keys, *summaries(tmp_path / "again")]
    data = file_bytes(entries)
    assert len(zlib.decompress(data[data.index(b"\n", len(S.MAGIC)) + 1:-S.DIGEST])) > 2 * S.CHUNK
    assert S.decode(data)[1] == entries
    lines = b"".join(S._entry(e) + b"\n" for e in entries)
    whole = zlib.compress(lines)
    for payload in (whole[:-7], whole + b"more"):
        head = {"format": S.FORMAT, "version": S.VERSION, "entries": len(entries), "payload_bytes": len(payload)}
        body = S.MAGIC + json.dumps(head, sort_keys=True).encode() + b"\n" + payload
        with pytest.raises(S.CacheRejected) as exc:
            S.decode(body + hashlib.sha256(body).digest())
        assert exc.value.reason == "malformed"


# the version of the cache this monitor wrote before a segment's tombstones were one array of rows (three arrays:
# tombstone_offsets, tombstone_timestamps, tombstone_horizons; main at 134ae54)
THREE_ARRAYS_VERSION = "88fd7629813fa1a6"


# ... and before an active segment's key set was decoded packed (``KeySizes``; a dict[int, int]; main at 9e2e785)
DICT_KEYS_VERSION = "2b49ff89ee5375dc"


@pytest.mark.parametrize("version", [THREE_ARRAYS_VERSION, DICT_KEYS_VERSION], ids=["three-arrays", "dict-keys"])
def test_a_cache_of_the_three_array_layout_is_refused_and_read_again_never_misread(tmp_path, version):
    """The tombstones' layout changed (issue 43): the fields' digest did with it, so a cache written before is
    another version, discarded in one line at start, and every segment read again (never three arrays' values
    read as rows). The same for the key sets' type (``KeySizes``)."""
    from collectors.logdirs.summary_state import SummaryState

    assert S.VERSION != version
    old = rewrite_header(file_bytes(summaries(tmp_path)), version=version)
    with pytest.raises(S.CacheRejected) as exc:
        S.decode(old)
    assert exc.value.reason == "version"
    said = []
    (tmp_path / "state").mkdir()
    (tmp_path / "state" / "c.cache").write_bytes(old)
    state = SummaryState(tmp_path / "state", "c.cache", notify=said.append)
    assert state.load() == [] and state.restored == 0
    assert len(said) == 1 and "discarded (version" in said[0] and "every segment is read" in said[0]


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
