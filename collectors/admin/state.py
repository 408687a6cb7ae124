"""What the admin source hands on (the source state the ``Store`` keeps): each compacted topic's config
and partitions' offsets (``AdminSnapshot``, from ``collectors.admin.topics``), each consumer group's lag
(``GroupSnapshot``, from ``collectors.admin.groups``). Plain frozen data: the exporter, the CLI, the
dashboard's and the audit's tests read it without a Kafka client; a resource a call failed or was refused
for is in ``unknown`` with the call and the reason, never silently missing (issue 35)."""

from __future__ import annotations

from dataclasses import dataclass, field

from monitor.model.topicconfig import BrokerSetting, TopicConfig

@dataclass(frozen=True)
class PartitionOffsets:
    leader: int
    earliest: int
    latest: int  # log end offset (high watermark)
    stable: int  # last stable offset (read_committed end)
    replicas: tuple = ()  # broker ids holding a replica (each cleans its own copy)
    isr: tuple = ()  # broker ids of the in-sync replicas (the metadata's ISR)


@dataclass(frozen=True)
class TopicInfo:
    name: str
    config: TopicConfig
    partitions: dict = field(default_factory=dict)  # partition -> PartitionOffsets


@dataclass(frozen=True)
class GroupLag:
    group: str
    topic: str
    partition: int
    committed: int
    end_offset: int
    lag_records: int
    lag_seconds: float | None  # None: unknown (lag_unknown_reason says why)
    delete_retention_seconds: float
    min_compaction_lag_seconds: float | None = None  # the topic's min.compaction.lag.ms, in seconds
    latest_value_only: bool = False  # declared in latest_value_only_groups (monitor.model.consumers)
    lag_method: str | None = None  # exact | interpolated | extrapolated (monitor.model.consumers.METHODS)
    lag_unknown_reason: str | None = None  # why lag_seconds is None (monitor.model.consumers.UNKNOWN_REASONS)

    @property
    def retention_fraction(self) -> float | None:
        if self.lag_seconds is None or self.delete_retention_seconds <= 0:
            return None
        return self.lag_seconds / self.delete_retention_seconds


@dataclass(frozen=True)
class AdminSnapshot:
    taken_at: float
    topics: dict = field(default_factory=dict)  # name -> TopicInfo (compacted topics only)
    errors: dict = field(default_factory=dict)
    transaction_max_timeout_ms: int | None = None  # the largest of the brokers' (None: none could tell)
    # broker id (str) -> Kafka name -> BrokerSetting (admin, else the config file's, else unknown with
    # the reason the broker gave): every broker the metadata lists
    cleaner_settings: dict = field(default_factory=dict)
    listed: frozenset = frozenset()  # every topic the metadata listed (a topic without Describe is not)
    not_compacted: dict = field(default_factory=dict)  # name -> TopicConfig of the listed topics not compacted
    refused: dict = field(default_factory=dict)  # topic -> why its config could not be read
    error_kinds: tuple = ()  # one per refused or failed part of the refresh (the store counts them)
    principal: str = ""  # who asked (User:<sasl.username>), for the messages
    # topic -> (call, reason): a topic a call failed or was refused for (describe_configs: its config and
    # whether it is compacted are unknown; list_offsets: some of its offsets are, -1), reason an error kind
    unknown: dict = field(default_factory=dict)
    # (topic, partition, broker) -> collectors.admin.replicas.OutOfSync: each replica of a compacted
    # partition out of the ISR now, since the first refresh that found it out (monitor.model.replicasafety)
    out_of_sync: dict = field(default_factory=dict)
    # broker id (int) -> producer.id.expiration.ms (describe_configs); a broker that did not tell is absent
    producer_id_expiration_ms: dict = field(default_factory=dict)

    def cleaner_setting(self, broker: str, key: str) -> BrokerSetting | None:
        return self.cleaner_settings.get(str(broker), {}).get(key)


@dataclass(frozen=True)
class GroupSnapshot:
    taken_at: float
    lags: tuple = ()
    errors: dict = field(default_factory=dict)
    error_kinds: tuple = ()
    # the group ids ListGroups gave (a group without Describe is left out, with no error); None when the
    # listing came with an error (a broker that did not answer: the groups it coordinates are missing, and
    # counting them as hidden by ACLs would be a false cause)
    listed: frozenset | None = None
    # group -> (call, reason): a group whose lag is not (or not wholly) in ``lags`` this refresh:
    # list_consumer_group_offsets failed (reason: its error kind), or list_offsets (end_offset_unknown:
    # the admin source has no log end offset for a partition it committed an offset on)
    unknown: dict = field(default_factory=dict)
