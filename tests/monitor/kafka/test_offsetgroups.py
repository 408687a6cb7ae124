"""monitor.kafka.offsetgroups over ``__consumer_offsets`` segments written by a real broker: the groups with
live committed offsets are the ones the test committed for (and not the one it deleted), and the same
as Kafka's own kafka-dump-log --offsets-decoder gives for the same files."""

from __future__ import annotations

import json
from pathlib import Path

from confluent_kafka import TopicPartition
from confluent_kafka.admin import AdminClient

from kafkatools import (commit_offsets, create_topic, localtools, produce,
                        unique_topic, wait_for)
from monitor.kafka.logdir import scan_partition
from monitor.kafka.offsetgroups import OFFSETS_TOPIC, key_group, live_groups, read_segment


def _offsets_partitions(log_dir):
    return sorted((p for p in Path(log_dir).iterdir() if p.name.startswith(OFFSETS_TOPIC + "-")), key=lambda p: p.name)


def _ours(log_dir) -> frozenset:
    out = set()
    for folder in _offsets_partitions(log_dir):
        out |= live_groups(read_segment(s.log)[0] for s in scan_partition(folder).segments)
    return frozenset(out)


def _kafkas(log_dir) -> frozenset:
    """The groups whose latest offset commit record per (group, topic, partition) has a value, as
    kafka-dump-log --offsets-decoder prints the records (its key as JSON with type 0/1 for offset
    commits, its payload "<DELETE>" for a tombstone, with valueSize -1; files in offset order)."""
    files = [s.log for f in _offsets_partitions(log_dir) for s in scan_partition(f).segments]
    latest = {}
    for line in localtools.dump_log(files, "--offsets-decoder").split("\n"):
        if " key: " not in line:
            continue
        key_text = line.split(" key: ", 1)[1].split(" payload: ", 1)[0]
        key = json.loads(key_text)
        if str(key.get("type")) not in ("0", "1"):
            continue
        k = (key["data"]["group"], key["data"]["topic"], key["data"]["partition"])
        deleted = line.rstrip().endswith(" payload: <DELETE>")
        assert deleted == (" valueSize: -1 " in line), line
        latest[k] = not deleted
    return frozenset(g for (g, _, _), live in latest.items() if live)


def test_live_groups_are_the_committed_ones_and_agree_with_kafka_dump_log(kafka):
    topic = create_topic(kafka.bootstrap, unique_topic("og"), partitions=2)
    produce(kafka.bootstrap, topic, [(b"k", b"v")] * 3, partition=0)
    kept = [unique_topic("og-kept") for _ in range(2)]
    gone = unique_topic("og-gone")
    for g in kept + [gone]:
        commit_offsets({"bootstrap.servers": kafka.bootstrap, "group.id": g},
                       [TopicPartition(topic, 0, 2), TopicPartition(topic, 1, 0)])
    admin = AdminClient({"bootstrap.servers": kafka.bootstrap})  # must outlive its futures
    admin.delete_consumer_groups([gone])[gone].result(60)  # tombstones its offsets

    def settled():
        found = _ours(kafka.log_dir)
        return found if set(kept) <= found and gone not in found else None

    ours = wait_for(settled, 60, "the committed groups live and the deleted one gone in __consumer_offsets")
    assert ours == _kafkas(kafka.log_dir)


def test_every_key_type_starts_with_the_group_id():
    """The key layout of the coordinator's records (int16 type, int16-length group id): an offset commit
    key (type 1, group, topic, partition) and a KIP-848 ConsumerGroupMemberMetadataKey (type 5, group,
    member id), built by hand; a key too short or with a length past its end is not one."""
    def s(x: str) -> bytes:
        return len(x.encode()).to_bytes(2, "big") + x.encode()

    assert key_group((1).to_bytes(2, "big") + s("payments") + s("orders") + (3).to_bytes(4, "big")) == (1, "payments")
    assert key_group((5).to_bytes(2, "big") + s("grp-é") + s("member-1")) == (5, "grp-é")
    assert key_group(b"\x00\x01\x00") is None
    assert key_group(b"\x00\x01\x00\x09abc") is None
    assert key_group(None) is None


def test_a_grown_segment_is_read_from_where_it_stopped(kafka):
    group = unique_topic("og-grow")
    topic = create_topic(kafka.bootstrap, unique_topic("og-grow"))
    commit_offsets({"bootstrap.servers": kafka.bootstrap, "group.id": group}, [TopicPartition(topic, 0, 0)])

    def holding():
        for folder in _offsets_partitions(kafka.log_dir):
            seg = scan_partition(folder).segments[-1]
            c, _ = read_segment(seg.log)
            if group in live_groups([c]):
                return seg.log, c
        return None

    path, first = wait_for(holding, 60, f"{group}'s commit in __consumer_offsets")
    size, stopped = path.stat().st_size, first.end_position
    commit_offsets({"bootstrap.servers": kafka.bootstrap, "group.id": group}, [TopicPartition(topic, 0, 0)])
    wait_for(lambda: path.stat().st_size > size, 60, "the second commit appended")
    again, read = read_segment(path, first)
    assert again is first and 0 < read <= path.stat().st_size - stopped  # only what came after
    assert group in live_groups([again])


def test_a_segment_with_a_corrupt_batch_keeps_what_it_could_read_and_is_not_read_again_unchanged(kafka, tmp_path):
    """A copy of a real __consumer_offsets segment with one byte of its last batch's records flipped (a
    fault the broker cannot be made to write): the batches before it still give their groups, the
    fault names the file, and the unchanged file is not read again at the next refresh."""
    group = unique_topic("og-bad")
    topic = create_topic(kafka.bootstrap, unique_topic("og-bad"))
    for offset in (1, 2):  # two batches: the first stays good
        commit_offsets({"bootstrap.servers": kafka.bootstrap, "group.id": group}, [TopicPartition(topic, 0, offset)])

    def holding():
        for folder in _offsets_partitions(kafka.log_dir):
            seg = scan_partition(folder).segments[-1]
            if group in live_groups([read_segment(seg.log)[0]]):
                return seg.log
        return None

    copy = tmp_path / "00000000000000000000.log"
    copy.write_bytes(wait_for(holding, 60, f"{group}'s commits in __consumer_offsets").read_bytes())
    data = bytearray(copy.read_bytes())
    data[-3] ^= 0xFF  # inside the last batch's records: its CRC no longer matches
    copy.write_bytes(bytes(data))
    first, read = read_segment(copy)
    assert read > 0 and first.faults and str(copy) in first.faults[0]
    assert group in live_groups([first])  # from its first commit, in an earlier batch
    again, read = read_segment(copy, first)
    assert again is first and read == 0
