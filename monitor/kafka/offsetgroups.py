"""Which consumer groups have live committed offsets, read from ``__consumer_offsets`` on disk.

Why: under least privilege Kafka's ListGroups answers only with the groups the principal may Describe,
and with no error (a principal without any Describe on GROUP sees an empty list). The consumer-group
series would then be silently absent. The log dirs holding ``__consumer_offsets`` know every group with
committed offsets, whatever the ACLs, so the collector can name the groups ListGroups leaves out
(``unlisted``; collectors: ``admin_unlisted_groups`` beside ``admin_listed_groups`` and
``offsets_topic_groups``, and the alert ConsumerGroupsHidden).

The record keys, as Kafka 4.3's group coordinator writes them (kafka-group-coordinator-4.3.0.jar,
``common/message/*Key.json``, type ``coordinator-key``, every one ``flexibleVersions: none``): an int16
record type (the schema's ``apiKey``: 0 ``LegacyOffsetCommitKey``, 1 ``OffsetCommitKey``, 2
``GroupMetadataKey``, 3-23 the KIP-848 consumer/share/streams group records), then the group id as a
non-flexible string (int16 length, UTF-8); every key type has the group id first. Offset commit keys
(types 0 and 1) go on: topic (string), partition (int32). A record with a null value (a tombstone)
deletes its key: an offset expired or deleted (``OffsetDelete``, ``DeleteGroups``).

A group counts when the latest record of at least one of its offset commit keys (group, topic,
partition) is not a tombstone, folded in offset order over a partition's segments (a cleaned segment
may hold a key whose later record sits in a later segment). Control batches (transaction markers) are
skipped; a transactional offset commit counts when written, aborted or not (the fold does not follow
transactions on this topic).

Cost: ``read_segment`` reads only what a segment gained since the previous read (keyed by path and
inode, from the last batch boundary), so a steady refresh reads only the bytes appended to
``__consumer_offsets``' active segments; the state kept is one entry per offset commit key.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass, field
from pathlib import Path

from monitor.kafka.record import RecordFormatError, SegmentReader

OFFSETS_TOPIC = "__consumer_offsets"
OFFSET_COMMIT_KEY_TYPES = (0, 1)  # LegacyOffsetCommitKey, OffsetCommitKey
_SHORT = struct.Struct(">h")
_COMMIT_PREFIXES = frozenset(_SHORT.pack(t) for t in OFFSET_COMMIT_KEY_TYPES)  # tested per record: no decode


def key_group(key: bytes | None) -> tuple[int, str] | None:
    """(record type, group id) of a ``__consumer_offsets`` record key; None when the key is too short
    or its group id is not a string (a key this module does not know)."""
    if key is None or len(key) < 4:
        return None
    (kind,) = _SHORT.unpack_from(key, 0)
    (n,) = _SHORT.unpack_from(key, 2)
    if n < 0 or 4 + n > len(key):
        return None
    try:
        return kind, key[4:4 + n].decode("utf-8")
    except UnicodeDecodeError:
        return None


@dataclass
class SegmentCommits:
    """One segment's offset commit keys, each with whether its latest record here is live."""

    path: str
    inode: int = 0
    size: int = 0  # the file's size when last read
    end_position: int = 0  # where the next read starts (a batch boundary)
    next_offset: int = -1  # the last batch's last offset + 1 (-1: no batch read)
    latest: dict[bytes, bool] = field(default_factory=dict)  # offset commit key -> True (live) / False (tombstone)
    faults: list[str] = field(default_factory=list)


def read_segment(path: str | Path, previous: SegmentCommits | None = None) -> tuple[SegmentCommits, int]:
    """The segment's offset commit keys, reusing ``previous`` when it is the same file (path and inode):
    as it is when its size has not changed (a segment with a fault is not read again until it changes),
    read on from its end position when it only grew; anything else is read again from the start.
    Returns it and how many bytes this call read."""
    path = Path(path)
    st = os.stat(path)
    same = previous is not None and previous.path == str(path) and previous.inode == st.st_ino
    if same and st.st_size == previous.size:
        return previous, 0
    grown = same and st.st_size > previous.size and not previous.faults
    s = previous if grown else SegmentCommits(str(path), inode=st.st_ino)
    s.size = st.st_size
    start = s.end_position
    reader = SegmentReader(path, start=start, skip_corrupt=True)
    latest = s.latest
    try:
        for batch, c in reader.decoded(columns=True):
            s.next_offset = batch.last_offset + 1
            if batch.is_control:
                continue
            for key, vs in zip(c.keys, c.value_sizes):
                if key is not None and key[:2] in _COMMIT_PREFIXES:
                    latest[bytes(key)] = vs >= 0
    except RecordFormatError as exc:
        s.faults.append(str(exc))
    s.end_position = reader.end_position
    s.faults.extend(str(f) for f in reader.log_faults())  # not a batch being appended right now
    return s, max(reader.end_position - start, 0)


def unlisted(on_disk: frozenset | None, listed: frozenset | None) -> frozenset | None:
    """The groups with live committed offsets in ``__consumer_offsets`` that ListGroups did not give:
    hidden from the collector's principal (ListGroups leaves out, with no error, every group it may not
    Describe), so their lag goes unseen. None when either side is unknown."""
    if on_disk is None or listed is None:
        return None
    return on_disk - listed


def most_advanced(replicas) -> dict[int, tuple[int, frozenset]]:
    """Partition -> (log end offset, groups) of its replica with the highest log end offset, from
    ``(partition, (log end offset, groups))`` pairs of any number of replicas: the replica furthest along
    speaks for its partition (a lagging one may still hold commits deleted since)."""
    best: dict[int, tuple[int, frozenset]] = {}
    for p, found in replicas:
        if found[0] > best.get(p, (-2,))[0]:
            best[p] = found
    return best


def live_groups(segments) -> frozenset[str]:
    """The groups with a live offset commit, from one partition's segments in offset order."""
    latest: dict[bytes, bool] = {}
    for s in segments:
        latest.update(s.latest)
    found = (key_group(k) for k, live in latest.items() if live)
    return frozenset(kg[1] for kg in found if kg is not None)  # a key too short to hold a group is none
