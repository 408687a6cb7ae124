"""What the Kafka admin API says: compacted topics, their effective configs, offsets (the leader's
last stable offset among them), each partition's replicas, the brokers' ``transaction.max.timeout.ms``
and log cleaner settings (``log.cleaner.threads``, ...: describe_configs on each broker), and consumer
groups' lag in records and in time (the timestamp of the record at the committed offset against now). A group whose time lag exceeds the topic's ``delete.retention.ms`` may
miss tombstones: the cleaner is free to drop a delete before the group reads it.

All librdkafka settings of the cluster's ``client`` section (SASL, TLS) are passed through.

Least privilege (docs/security.md's ACL table): every call here needs Describe or DescribeConfigs (topics,
the cluster, groups) except the exact time lag, which reads the record at the committed offset and so
needs Read on the topic. Without Read the time lag is interpolated from the log end offsets this
fetcher samples at each topics() refresh (``monitor.model.consumers.interpolated_lag``). A call the broker
refuses for want of an ACL is an error of kind ``unauthorized`` (counted in ``source_errors_total``)
and is logged once per (call, resource), naming the ACL that is missing.

A refresh is up only when it got what it asked for (issue 35): a call that times out or fails (no
answer, a broker's error) counts against it. When every call of a kind fails (every topic's
describe_configs, every partition's list_offsets, every group's list_consumer_group_offsets) the
refresh raises (the source is down, with the error); when some fail, the resources they were about are
unknown in the snapshot with the call and the reason (``AdminSnapshot.unknown``,
``GroupSnapshot.unknown``: exported as ``topic_admin_unknown`` and ``consumer_group_lag_unknown``),
never silently missing. A refusal for want of an ACL is an answer, not a failure: it never puts the
source down (the refused resources are reported as such).

A client whose calls time out while the cluster answers its metadata is rebuilt
(``REBUILD_AFTER_TIMED_OUT_REFRESHES``), at most once per ``REBUILD_BACKOFF_SECONDS`` (a frozen broker
times out with any client); a failed ListOffsets is one error per call and broker, naming it and the
partitions it covered; librdkafka's own log lines go through ``logging``
(``collectors.admin.clientlog``: each broker's connection failure once per kind and 5 minutes); a cluster out of
reach is named with the kind (refused, timeout, TLS, SASL, unknown host) and the advice for it
(``collectors.admin.errors.ClusterUnreachable``).

The jobs are apart (fetching only: the exporter exposes what the ``Store`` keeps):
``collectors.admin.client`` builds the clients, tells a failed call's kind and rebuilds the clients;
``collectors.admin.topics`` reads the topics, their configs, offsets and the brokers' settings;
``collectors.admin.groups`` the groups' lag; ``collectors.admin.state`` is what they hand on.
``AdminFetcher`` here is one fetcher's clients with both refreshes over them.
"""

from __future__ import annotations

import time

from collectors.admin.client import AdminSession
from collectors.admin.groups import GroupFetch
from collectors.admin.state import AdminSnapshot, GroupSnapshot
from collectors.admin.topics import TopicFetch
from monitor.settings.config import ClusterConfig


class AdminFetcher:
    """One cluster's admin clients (``session``) and the refreshes asked over them: ``topics()`` (the admin
    source) and ``group_lags()`` (the consumer-groups source: give it its own fetcher, so that each source's
    thread has its own clients). ``clock`` stamps the snapshots."""

    def __init__(self, cluster: ClusterConfig, timeout: float = 10.0, clock=time.time):
        self.session = AdminSession(cluster, timeout)
        self._topics = TopicFetch(self.session, clock)
        self._groups = GroupFetch(self.session, clock)

    @property
    def cluster(self) -> ClusterConfig:
        return self.session.cluster

    @property
    def timeout(self) -> float:
        return self.session.timeout

    @property
    def principal(self) -> str:
        return self.session.principal

    @property
    def rebuilds(self) -> int:
        """Clients rebuilt since start (``collectors.admin.client.REBUILD_AFTER_TIMED_OUT_REFRESHES``)."""
        return self.session.rebuilds

    def topics(self) -> AdminSnapshot:
        """The compacted topics, their configs and offsets, the brokers' settings (``admin_topics``)."""
        return self._topics.topics()

    def sample(self, topics: dict, taken_at: float) -> None:
        """Each partition's log end offset of an admin snapshot, for the interpolated time lag."""
        self._groups.sample(topics, taken_at)

    def group_lags(self, topics: dict, taken_at: float | None = None) -> GroupSnapshot:
        """Every consumer group's lag on the compacted ``topics`` (``admin_groups``)."""
        return self._groups.group_lags(topics, taken_at)

    def close(self) -> None:
        self.session.close()
