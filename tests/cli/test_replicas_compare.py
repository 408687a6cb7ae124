"""``replicas compare --leader PATH --follower PATH`` and ``monitor.kafka.replicakeys``, on partition folders written here
record by record (tests/recordfixtures.py): a leader whose clean removed two keys and their tombstones, a
follower that still holds their values. The real case, a follower down past delete.retention.ms on a
real cluster, is tests/collectors/test_replica_safety_cluster.py."""

from __future__ import annotations

import base64
import io
import json

from cli.replicas_cmd import run_compare
from monitor.kafka.replicakeys import read_keys
from recordfixtures import T0, Rec, v2, write


def _copy(root, broker: int, batches) -> str:
    folder = root / f"broker{broker}" / "orders-0"
    write(folder / "00000000000000000000.log", batches)
    (folder.parent / "meta.properties").write_text(f"version=1\nnode.id={broker}\n")
    return str(folder)


def _values(keys, first: int):
    return [Rec(first + i, T0, k, b"v-" + k) for i, k in enumerate(keys)]


def test_the_keys_a_follower_kept_that_its_leader_cleaned_away(tmp_path):
    keys = [b"a", b"b", b"c", b"d"]
    # the leader: a, b deleted (their values and tombstones cleaned away), c deleted with its tombstone kept
    leader = _copy(tmp_path, 1, [v2([Rec(2, T0, b"c", None), Rec(3, T0, b"d", b"v-d")], last_offset=3),
                                 v2([Rec(6, T0, b"roll", b"1")])])
    follower = _copy(tmp_path, 3, [v2(_values(keys, 0)), v2([Rec(6, T0, b"roll", b"1")])])
    lead = read_keys(leader)
    assert (lead.log_start, lead.log_end, lead.whole) == (0, 7, True)  # the first segment's base, not offset 2
    assert lead.latest[b"c"] == (2, True)

    out, err = io.StringIO(), io.StringIO()
    assert run_compare(leader, follower, out=out, err=err) == 1
    text = out.getvalue()
    assert "broker 3's replica still holds 2 key(s) that broker 1's copy has deleted (b'a', b'b')" in text
    assert "Cause:" in text and "Evidence:" in text and "Fix:" in text

    out = io.StringIO()
    assert run_compare(leader, follower, fmt="json", out=out, err=err) == 1
    got = json.loads(out.getvalue())
    assert [(k["key"], base64.b64decode(k["key_base64"]), k["follower_offset"]) for k in got["resurrected"]] == [
        ("a", b"a", 0), ("b", b"b", 1)]
    assert (got["leader"], got["follower"], got["topic"], got["partition"]) == ("1", "3", "orders", 0)

    # the leader against itself: nothing came back
    assert run_compare(leader, leader, out=io.StringIO(), err=err) == 0


def test_not_two_folders_of_one_partition_is_a_usage_error(tmp_path):
    a = _copy(tmp_path, 1, [v2(_values([b"a"], 0))])
    other = tmp_path / "broker3" / "payments-0"
    other.mkdir(parents=True)
    err = io.StringIO()
    assert run_compare(a, str(other), out=io.StringIO(), err=err) == 2
    assert "different partitions" in err.getvalue()
    assert run_compare(a, str(tmp_path), out=io.StringIO(), err=(err := io.StringIO())) == 2
    assert f"{tmp_path}: not a partition folder" in err.getvalue()


def test_a_copy_not_read_whole_concludes_nothing(tmp_path):
    leader = _copy(tmp_path, 1, [v2(_values([b"a"], 0))])
    follower = _copy(tmp_path, 3, [v2(_values([b"a", b"b"], 0))])
    seg = tmp_path / "broker3" / "orders-0" / "00000000000000000000.log"
    seg.write_bytes(seg.read_bytes()[:-3])  # a batch cut short
    err = io.StringIO()
    assert run_compare(leader, follower, out=(out := io.StringIO()), err=err) == 1
    assert "no comparison made" in err.getvalue() and str(seg) in err.getvalue() and out.getvalue() == ""
    assert f"{seg}: byte 0: " in err.getvalue()  # the file and the byte position of the batch cut short
