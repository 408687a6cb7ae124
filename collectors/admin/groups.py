"""The admin source's consumer-groups refresh: every group's committed offsets on the compacted topics
(from the topics refresh), its lag in records against the log end offset and in time: exact, the
timestamp of the record at the committed offset against now (needs Read on the topic), else
interpolated from the log end offsets sampled at each topics refresh (``monitor.model.consumers``). A group
whose time lag exceeds the topic's ``delete.retention.ms`` may miss tombstones: the cleaner is free to
drop a delete before the group reads it.

Up only when it got what it asked for (``collectors.admin.source``): every group's offsets failing raises;
some failing makes those groups unknown (``GroupSnapshot.unknown``) with the call and the reason.
"""

from __future__ import annotations

import time

from confluent_kafka import ConsumerGroupTopicPartitions, KafkaException, TopicPartition

from boundedhttp import FetchError
from collectors.admin.client import (AUTHORIZATION_ERRORS, UNAUTHORIZED, AdminSession, authorization_failure,
                                     call_error_kind)
from collectors.admin.state import GroupLag, GroupSnapshot
from monitor.model.consumers import (EXACT, RECORD_COMPACTED, TimeLag, add_sample, interpolated_lag,
                                     latest_value_only)

READ_RETRY_SECONDS = 600.0
# seconds between the two log-end-offset samples a one-shot (collect --once, topics lint, explain) takes
# when a group's time lag needs them (``undated``)
SAMPLE_GAP_SECONDS = 3.0


def undated(snapshot) -> list:
    """The lags of a ``GroupSnapshot`` that a second log-end-offset sample could date: their record not read
    (compacted away, or Read refused) and one sample too few to interpolate from."""
    from monitor.model.consumers import RECORD_COMPACTED, TOO_FEW_SAMPLES

    return [g for g in (snapshot.lags if snapshot is not None else ())
            if g.lag_seconds is None and g.lag_unknown_reason in (RECORD_COMPACTED, TOO_FEW_SAMPLES)]  # how long a topic whose Read was refused goes without another try


class GroupFetch:
    """``group_lags()``: one ``GroupSnapshot`` per refresh, asked through ``session``; ``clock`` stamps it.
    Keeps, between refreshes, the log end offsets sampled (for the interpolated time lag), the timestamps
    read (by offset) and the topics whose Read was refused."""

    def __init__(self, session: AdminSession, clock=time.time):
        self.session = session
        self.clock = clock
        self._ts_cache: dict[tuple[str, int, int], tuple[int, int]] = {}  # -> (offset read, its timestamp)
        self._samples: dict[tuple[str, int], tuple] = {}  # (topic, partition) -> log-end-offset samples
        self._sampled_at: float | None = None  # the admin snapshot the samples last took
        self._read_refused: dict[str, float] = {}  # topic -> when Read was refused (no exact time lag)

    def sample(self, topics: dict, taken_at: float) -> None:
        """Each partition's log end offset from an admin snapshot (``topics()``: ``topics`` taken at
        ``taken_at``) into its sample table, once per snapshot: what the time lag is interpolated from
        without Read. Partitions gone from the snapshot lose their table."""
        if self._sampled_at is not None and taken_at <= self._sampled_at:
            return
        self._sampled_at = taken_at
        seen = set()
        for t, info in topics.items():
            for p, po in info.partitions.items():
                if po.latest >= 0:
                    seen.add((t, p))
                    self._samples[(t, p)] = add_sample(self._samples.get((t, p), ()), taken_at, po.latest)
        for key in set(self._samples) - seen:
            del self._samples[key]

    def group_lags(self, topics: dict, taken_at: float | None = None) -> GroupSnapshot:
        """Lag of every consumer group on the compacted ``topics`` (from ``topics()``, taken at
        ``taken_at``: its log end offsets are sampled for the interpolated time lag). A group whose
        offsets could not be had is unknown (``GroupSnapshot.unknown``); every group's: raise."""
        with self.session.refresh():
            return self._group_lags(topics, taken_at)

    def _group_lags(self, topics: dict, taken_at: float | None) -> GroupSnapshot:
        if taken_at is not None:
            self.sample(topics, taken_at)
        now = self.clock()
        errors, kinds = {}, []
        with self.session.reached():
            listing = self.session.result(
                self.session.admin.list_consumer_groups(request_timeout=self.session.timeout), "list_consumer_groups")
        for err in listing.errors:  # a group the listing could not describe (a coordinator refused)
            errors[f"list_consumer_groups {len(errors)}"] = str(err)
            exc = err if isinstance(err, KafkaException) else KafkaException(err)
            kinds.append(call_error_kind(exc))
        group_ids = sorted(g.group_id for g in listing.valid)
        self.session.answered = bool(group_ids) or not listing.errors
        if not group_ids and not (set(kinds) & {UNAUTHORIZED}):
            # librdkafka can answer ListGroups with nothing but errors, or an empty list, when no broker
            # answered in time: "no group" must come from a cluster that answers (then the errors, a
            # broker down, are the source's errors), not stand in for an unreachable one (then it is down)
            with self.session.reached():
                self.session.list_topics()
            self.session.answered = True
        lags, unknown, failed = [], {}, []
        for gid in group_ids:
            try:
                fut = self.session.admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(gid)],
                                                                     request_timeout=self.session.timeout)[gid]
                committed = self.session.result(fut, f"list_consumer_group_offsets of {gid}").topic_partitions
            except (KafkaException, FetchError) as exc:
                self.session.failed("Describe", "GROUP", gid, exc, errors, kinds, gid)
                unknown[gid] = ("list_consumer_group_offsets", call_error_kind(exc))
                if not authorization_failure(exc):
                    failed.append(exc)
                continue
            for tp in committed:
                info = topics.get(tp.topic)
                if info is None or tp.offset < 0:
                    continue
                po = info.partitions.get(tp.partition)
                if po is None:
                    continue
                if po.latest < 0:  # the admin source's list_offsets failed for it (topic_admin_unknown)
                    unknown.setdefault(gid, ("list_offsets", "end_offset_unknown"))
                    continue
                end = po.latest
                lag = max(end - tp.offset, 0)
                tl = TimeLag(0.0, EXACT) if lag == 0 else self._time_lag(tp.topic, tp.partition, tp.offset, now,
                                                                          errors, kinds)
                lags.append(GroupLag(gid, tp.topic, tp.partition, tp.offset, end, lag, tl.seconds,
                                     info.config.delete_retention_ms / 1000.0,
                                     info.config.min_compaction_lag_ms / 1000.0,
                                     latest_value_only(gid, self.session.cluster.latest_value_only_groups),
                                     tl.method, tl.reason))
        self.session.every_call_failed("list_consumer_group_offsets of the groups", len(group_ids), failed)
        return GroupSnapshot(now, tuple(lags), errors, tuple(kinds),
                             None if listing.errors else frozenset(group_ids), unknown)

    def _time_lag(self, topic: str, partition: int, offset: int, now: float, errors: dict, kinds: list) -> TimeLag:
        """Exact (the timestamp of the record at ``offset``) when the record can be read, else interpolated
        from the log-end-offset samples. A record compacted away is not stood in for by the first one after
        it (appended later: its age understates the lag, the more the longer the group has been away): the
        lag is then interpolated, or unknown (``RECORD_COMPACTED``) with fewer than two samples. A topic whose
        Read was refused is not read again for READ_RETRY_SECONDS (a refusal per partition and refresh would
        cost a fetch each); then it is asked again, so that an ACL granted later brings the exact lag back."""
        refused_at = self._read_refused.get(topic)
        compacted = False
        if refused_at is None or now - refused_at >= READ_RETRY_SECONDS:
            try:
                got = self._timestamp_at(topic, partition, offset)
            except KafkaException as exc:
                self.session.failed("Read", "TOPIC", topic, exc, errors, kinds, f"read {topic}-{partition}@{offset}",
                                    ": the time lag is interpolated from the log end offsets instead, not exact")
                self._read_refused[topic] = now
                got = None
            else:
                self._read_refused.pop(topic, None)
            if got is not None:
                read, ts = got
                if read == offset:
                    return TimeLag(max(now - ts / 1000.0, 0.0), EXACT)
                compacted = True
        tl = interpolated_lag(self._samples.get((topic, partition), ()), offset, now)
        return TimeLag(None, None, RECORD_COMPACTED) if compacted and tl.seconds is None else tl

    def _timestamp_at(self, topic: str, partition: int, offset: int) -> tuple[int, int] | None:
        """The offset and timestamp of the first record at or after ``offset`` (compaction leaves gaps);
        cached. None when none came in time; KafkaException when the broker refused the fetch (an
        authorization error)."""
        key = (topic, partition, offset)
        if key in self._ts_cache:
            return self._ts_cache[key]
        c = self.session.lookup_consumer()
        c.assign([TopicPartition(topic, partition, offset)])
        ts = None
        deadline = time.monotonic() + self.session.timeout
        while time.monotonic() < deadline:
            msg = c.poll(0.5)
            if msg is None:
                continue
            if msg.error():
                if msg.error().code() in AUTHORIZATION_ERRORS:
                    c.unassign()
                    raise KafkaException(msg.error())
                continue
            ts = (msg.offset(), msg.timestamp()[1])
            break
        c.unassign()
        if ts is None:
            self.session.timed_out += 1  # no record in time: a lookup consumer stuck as the admin client can be
        if ts is not None:
            if len(self._ts_cache) > 100_000:
                self._ts_cache.clear()
            self._ts_cache[key] = ts
        return ts
