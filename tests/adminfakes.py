"""Fakes of confluent-kafka's AdminClient for the admin source's tests: each injects what a real broker
cannot be made to do on demand (one group's or one topic's call timing out while the others answer).
The real broker's answers are tested in tests/collectors/admin/test_admin_kafka.py and the clusters' tests."""

from __future__ import annotations

from concurrent.futures import Future
from types import SimpleNamespace

from confluent_kafka import KafkaError, KafkaException

from collectors.admin.source import AdminFetcher
from collectors.admin.state import PartitionOffsets, TopicInfo
from monitor.settings.config import ClusterConfig
from monitor.model.topicconfig import TopicConfig

TIMED_OUT = KafkaException(KafkaError(KafkaError._TIMED_OUT, "Failed while waiting for response from broker"))


def done(value=None, exc=None) -> Future:
    f = Future()
    f.set_exception(exc) if exc is not None else f.set_result(value)
    return f


class FakeAdmin:
    """ListGroups answers ``groups``; each group's offsets are ``offsets[group]`` (a list of
    TopicPartition) or an exception."""

    def __init__(self, groups, offsets):
        self.groups, self.offsets = groups, offsets

    def list_consumer_groups(self, **_):
        return done(SimpleNamespace(valid=[SimpleNamespace(group_id=g) for g in self.groups], errors=[]))

    def list_consumer_group_offsets(self, requests, **_):
        gid = requests[0].group_id
        got = self.offsets[gid]
        return {gid: done(exc=got) if isinstance(got, Exception) else done(SimpleNamespace(topic_partitions=got))}

    def poll(self, _):
        return 0


TOPICS = {"t": TopicInfo("t", TopicConfig.from_strings({"cleanup.policy": "compact"}),
                         {0: PartitionOffsets(1, 0, 10, 10, (1,))})}


def fetcher(admin) -> AdminFetcher:
    f = AdminFetcher(ClusterConfig(name="c", bootstrap_servers="127.0.0.1:1"), timeout=1)
    f.session.admin = admin
    return f
