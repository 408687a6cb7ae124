"""What the Kafka admin API says: compacted topics, their effective configs, offsets (the leader's
last stable offset among them), each partition's replicas, the brokers' ``transaction.max.timeout.ms``
and log cleaner settings (``log.cleaner.threads``, ...: describe_configs on each broker), and consumer groups' lag in records and in time (the timestamp of the record at the committed
offset against now). A group whose time lag exceeds the topic's ``delete.retention.ms`` may
miss tombstones: the cleaner is free to drop a delete before the group reads it.

All librdkafka settings of the cluster's ``client`` section (SASL, TLS) are passed through.

Least privilege (the README's ACL table): every call here needs Describe or DescribeConfigs (topics,
the cluster, groups) except the exact time lag, which reads the record at the committed offset and so
needs Read on the topic. Without Read the time lag is interpolated from the log end offsets this
fetcher samples at each topics() refresh (``monitor.consumers.interpolated_lag``). A call the broker
refuses for want of an ACL is an error of kind ``unauthorized`` (counted in ``source_errors_total``)
and is logged once per (call, resource), naming the ACL that is missing.
"""

from __future__ import annotations

import concurrent.futures
import logging
import time
from contextlib import contextmanager
from dataclasses import dataclass, field

from confluent_kafka import (Consumer, ConsumerGroupTopicPartitions, IsolationLevel, KafkaError, KafkaException,
                             TopicPartition)
from confluent_kafka.admin import AdminClient, ConfigResource, OffsetSpec, ResourceType

from boundedhttp import FetchError
from monitor.config import ClusterConfig
from monitor.consumers import EXACT, TimeLag, add_sample, interpolated_lag, latest_value_only
from monitor.topicconfig import (CLEANER_SETTINGS, BrokerSetting, ConfigValueError, TopicConfig,
                                 broker_cleaner_settings)

COMPACTION_KEYS = ("cleanup.policy", "min.cleanable.dirty.ratio", "min.compaction.lag.ms", "max.compaction.lag.ms",
                   "delete.retention.ms", "segment.bytes", "segment.ms",
                   "retention.ms", "retention.bytes")
TRANSACTION_MAX_TIMEOUT = "transaction.max.timeout.ms"
UNAUTHORIZED = "unauthorized"  # the error kind of a refused call (as boundedhttp's for an HTTP 401/403)
# Kafka's authorization error codes -> the resource type the missing ACL is on (kafka-acls' names)
AUTHORIZATION_ERRORS = {KafkaError.TOPIC_AUTHORIZATION_FAILED: "TOPIC",
                        KafkaError.GROUP_AUTHORIZATION_FAILED: "GROUP",
                        KafkaError.CLUSTER_AUTHORIZATION_FAILED: "CLUSTER"}
log = logging.getLogger("compaction_monitor.admin")
READ_RETRY_SECONDS = 600.0  # how long a topic whose Read was refused goes without another try
RESULT_MARGIN = 2.0  # seconds a result is waited for beyond the request timeout librdkafka has (``_result``)


@dataclass(frozen=True)
class PartitionOffsets:
    leader: int
    earliest: int
    latest: int  # log end offset (high watermark)
    stable: int  # last stable offset (read_committed end)
    replicas: tuple = ()  # broker ids holding a replica (each cleans its own copy)


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
    latest_value_only: bool = False  # declared in latest_value_only_groups (monitor.consumers)
    lag_method: str | None = None  # exact | interpolated | extrapolated (monitor.consumers.METHODS)
    lag_unknown_reason: str | None = None  # why lag_seconds is None (monitor.consumers.UNKNOWN_REASONS)

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


def _client_conf(cluster: ClusterConfig, timeout: float | None = None) -> dict:
    """librdkafka's settings: the cluster's ``client`` section over ours. With ``timeout`` (the admin
    timeout, seconds), ``socket.timeout.ms`` defaults to it rather than librdkafka's 60000: a request
    outlives the call that made it and stays in flight on its broker until socket.timeout.ms, and only
    then does librdkafka drop that connection (socket.max.fails=1: rdkafka_broker.c,
    rd_kafka_broker_timeout_scan). Until then a broker that accepts but never answers (frozen,
    partitioned away) stays "up" to librdkafka, which keeps sending it the metadata requests of
    list_topics (rd_kafka_metadata: any usable broker): one such broker put the admin source down for a
    minute while two others could answer (tests/collectors/test_broker_partitioned_cluster.py)."""
    if not cluster.bootstrap_servers:
        raise ValueError(f"cluster {cluster.name}: no bootstrap_servers")
    conf = {"bootstrap.servers": cluster.bootstrap_servers}
    if timeout is not None:  # librdkafka's bounds: 10 .. 300000 ms
        conf["socket.timeout.ms"] = min(max(int(timeout * 1000), 10), 300000)
    conf.update({k: v for k, v in cluster.client.items()})
    return conf


def principal(cluster: ClusterConfig) -> str:
    """The principal the brokers authorize, as kafka-acls names it: User:<sasl.username> (SCRAM, PLAIN);
    without one (mTLS, Kerberos: mapped by the broker's rules) it cannot be told here."""
    user = cluster.client.get("sasl.username")
    return f"User:{user}" if user else "the client's principal"


def authorization_failure(exc: BaseException) -> str | None:
    """The resource type (TOPIC, GROUP, CLUSTER) whose ACL the broker found missing, None when ``exc``
    is not an authorization failure."""
    err = exc.args[0] if isinstance(exc, KafkaException) and exc.args else None
    return AUTHORIZATION_ERRORS.get(err.code()) if isinstance(err, KafkaError) else None


def refusal(operation: str, resource_type: str, name: str, who: str) -> str:
    """The missing ACL in kafka-acls' words: "DescribeConfigs on TOPIC accounts.changelog for User:blind"."""
    return f"{operation} on {resource_type}{' ' + name if name else ''} for {who}"


class AdminFetcher:
    def __init__(self, cluster: ClusterConfig, timeout: float = 10.0, clock=time.time):
        self.cluster = cluster
        self.timeout = timeout
        self.clock = clock
        self._auth_error: str | None = None  # librdkafka's last SASL refusal (error_cb), for the message
        self._admin = AdminClient({**_client_conf(cluster, timeout), "error_cb": self._on_client_error})
        self._consumer = None
        self._ts_cache: dict[tuple[str, int, int], int | None] = {}
        self.principal = principal(cluster)
        self._logged: set[tuple[str, str, str]] = set()  # refusals already logged: (operation, type, name)
        self._samples: dict[tuple[str, int], tuple] = {}  # (topic, partition) -> log-end-offset samples
        self._sampled_at: float | None = None  # the admin snapshot the samples last took
        self._read_refused: dict[str, float] = {}  # topic -> when Read was refused (no exact time lag)

    def _failed(self, operation: str, resource_type: str, name: str, exc: BaseException, errors: dict,
                kinds: list, key: str, instead: str = "") -> None:
        """A failed call on one resource: its reason in ``errors[key]``; an authorization failure is of
        kind ``unauthorized``, names the ACL missing, and is logged once per (operation, resource)."""
        missing = authorization_failure(exc)
        if missing is None:
            errors[key] = str(exc)
            kinds.append("kafka")
            return
        what = refusal(operation, missing, name if missing == resource_type != "CLUSTER" else "", self.principal)
        errors[key] = f"refused: no {what} ({exc.args[0].name()})"
        kinds.append(UNAUTHORIZED)
        if (operation, missing, name) not in self._logged:
            self._logged.add((operation, missing, name))
            log.warning("cluster %s: %s: the broker refused %s (%s)%s; grant it with kafka-acls --add "
                        "--allow-principal %s --operation %s%s", self.cluster.name, key, what,
                        exc.args[0].name(), instead, self.principal, operation,
                        " --cluster" if missing == "CLUSTER" else
                        f" --{missing.lower()} {name if missing == resource_type else '<name>'}")

    def _on_client_error(self, err: KafkaError) -> None:
        # librdkafka (rdkafka_sasl.c) says "SASL authentication error: <broker's message>" when the broker
        # answers SaslAuthenticate with an error (wrong credentials); a listener that does not speak SASL, or
        # a mechanism it has not enabled, fails the handshake instead ("mechanism handshake failed"), which
        # is no credentials problem and keeps librdkafka's own error
        if err.code() == KafkaError._AUTHENTICATION and "SASL authentication error" in err.str():
            self._auth_error = err.str()

    @contextmanager
    def _credentials_checked(self):
        """The first call of a refresh: when it fails after a broker refused the SASL credentials,
        librdkafka says only "Broker transport failure"; say instead that the credentials were refused
        (error kind ``credentials``), with the refusal librdkafka gave its error callback, which names the
        broker (never a password: Kafka's SaslAuthenticationException message does not carry it)."""
        self._auth_error = None
        try:
            yield
        except KafkaException as exc:
            self._admin.poll(0)  # serves error_cb
            if self._auth_error is None:
                raise
            raise FetchError(f"bootstrap {self.cluster.bootstrap_servers}", "credentials",
                             f"the brokers refused the credentials of {self.principal} "
                             f"({self.cluster.client.get('sasl.mechanism', 'SASL')}): {self._auth_error}; "
                             f"librdkafka: {exc.args[0].str() if exc.args else exc}") from None

    def _result(self, fut, what: str):
        """A request's result, waited for ``RESULT_MARGIN`` longer than the ``request_timeout`` librdkafka
        was given, so that librdkafka's own timeout settles it first: with the broker's error, or for a
        request sent to every broker (list_consumer_groups) with the answers of those that answered and
        an error for each that did not (rdkafka_admin.c, rd_kafka_ListConsumerGroups_response_merge).
        Waiting exactly as long lost that race: one frozen broker put the consumer-groups source down
        with a bare ``TimeoutError``. Past the margin: a timeout naming the endpoint."""
        wait = self.timeout + RESULT_MARGIN
        try:
            return fut.result(timeout=wait)
        except concurrent.futures.TimeoutError:
            raise FetchError(f"bootstrap {self.cluster.bootstrap_servers}", "timeout",
                             f"{what}: no answer within {wait:g}s") from None

    def close(self) -> None:
        if self._consumer is not None:
            self._consumer.close()
            self._consumer = None
        self._admin = None

    # ------------------------------------------------------------------ topics
    def topics(self) -> AdminSnapshot:
        now = self.clock()
        with self._credentials_checked():
            md = self._admin.list_topics(timeout=self.timeout)
        names = [t for t in md.topics if not md.topics[t].error]
        resources = [ConfigResource(ResourceType.TOPIC, t) for t in names]
        errors, kinds, refused = {}, [], {}
        configs = {}
        if resources:
            for res, fut in self._admin.describe_configs(resources, request_timeout=self.timeout).items():
                try:
                    entries = self._result(fut, f"describe_configs of topic {res.name}")
                except KafkaException as exc:
                    self._failed("DescribeConfigs", "TOPIC", res.name, exc, errors, kinds, res.name)
                    refused[res.name] = errors[res.name]
                    continue
                raw = {k: entries[k].value for k in COMPACTION_KEYS if k in entries}
                try:
                    configs[res.name] = TopicConfig.from_strings(raw)
                except ConfigValueError as exc:
                    errors[res.name] = str(exc)
                    refused[res.name] = f"malformed config: {exc}"
        compacted = {t: c for t, c in configs.items() if c.compacted}
        tps = [TopicPartition(t, p) for t in compacted for p in md.topics[t].partitions]
        offsets = self._offsets(tps) if tps else {}
        topics = {}
        for t, cfg in compacted.items():
            parts = {}
            for p, pm in md.topics[t].partitions.items():
                e, l, s = offsets.get((t, p), (-1, -1, -1))
                parts[p] = PartitionOffsets(pm.leader, e, l, s, tuple(pm.replicas))
            topics[t] = TopicInfo(t, cfg, parts)
        topic_configs, configs = configs, self._broker_configs(md.brokers, errors, kinds)
        return AdminSnapshot(now, topics, errors, self._transaction_max_timeout(configs, errors),
                             self._cleaner_settings(configs), frozenset(names),
                             {t: c for t, c in topic_configs.items() if not c.compacted}, refused, tuple(kinds),
                             self.principal)

    def _broker_configs(self, brokers, errors: dict, kinds: list) -> dict:
        """Each broker's configs (describe_configs on its BROKER resource: the values in force, Kafka's
        defaults included): broker id -> {name: value} or, when it refused or did not answer, the reason
        (a str)."""
        out = {}
        for bid in sorted(brokers):  # one request per broker: a BROKER resource is answered by that broker
            res = ConfigResource(ResourceType.BROKER, str(bid))
            try:
                entries = self._result(self._admin.describe_configs([res], request_timeout=self.timeout)[res],
                                       f"describe_configs of broker {bid}")
                out[bid] = {k: e.value for k, e in entries.items()}
            except KafkaException as exc:
                key = f"broker {bid} describe_configs"
                self._failed("DescribeConfigs", "CLUSTER", "", exc, errors, kinds, key)
                out[bid] = f"describe_configs of broker {bid} refused: {errors[key]}"
        return out

    @staticmethod
    def _transaction_max_timeout(configs: dict, errors: dict) -> int | None:
        """The brokers' ``transaction.max.timeout.ms``, the largest of them. Each transaction coordinator
        refuses a producer a longer transaction.timeout.ms and aborts a transaction older than the
        producer's, so a transaction open longer than the largest any broker allows is hanging whichever
        coordinator owns it. None when no broker answered (the caller falls back on the config file, then
        the default)."""
        values = []
        for bid, got in configs.items():
            try:
                if isinstance(got, str):
                    raise KafkaException(got)
                values.append(int(got[TRANSACTION_MAX_TIMEOUT]))
            except (KafkaException, KeyError, TypeError, ValueError) as exc:
                errors[f"broker {bid} {TRANSACTION_MAX_TIMEOUT}"] = f"{type(exc).__name__}: {exc}"
        return max(values) if values else None

    def _cleaner_settings(self, configs: dict) -> dict:
        """Each broker's log cleaner settings by ``broker_cleaner_settings``' precedence: the broker's own
        values, else the config file's ``cleaner``, else unknown with the broker's refusal as the reason
        (never Kafka's default: the broker was asked and did not tell)."""
        out = {}
        for bid, got in configs.items():
            if isinstance(got, str):
                out[str(bid)] = broker_cleaner_settings(file=self.cluster.cleaner, admin_error=got)
                continue
            admin = {k: got[k] for k in CLEANER_SETTINGS if got.get(k) is not None}
            try:
                settings = broker_cleaner_settings(admin=admin, file=self.cluster.cleaner,
                                                   admin_error=f"broker {bid} did not list it")
            except ConfigValueError as exc:
                settings = broker_cleaner_settings(file=self.cluster.cleaner,
                                                   admin_error=f"broker {bid} gave a malformed value: {exc}")
            out[str(bid)] = settings
        return out

    # The producers' view (DescribeProducers, KIP-664: per partition, each active producer's
    # currentTxnStartOffset, as `kafka-transactions.sh describe-producers` prints it) would check the
    # log's open transactions producer by producer, but this client cannot ask for it: confluent-kafka
    # 2.16.1's AdminClient has no describe_producers, and its librdkafka 2.16.0 exports no
    # DescribeProducers (nor List/DescribeTransactions). kafka-python 3.0.12 can
    # (KafkaAdminClient.describe_producers, to the leader or to a given replica), but it is a test
    # dependency only and would need the `client:` section's librdkafka settings translated.
    # So the check is on the LSO (ListOffsets at READ_COMMITTED, below; monitor.lsocheck).
    def _offsets(self, tps) -> dict:
        out = {}
        specs = {"earliest": OffsetSpec.earliest(), "latest": OffsetSpec.latest()}
        got = {}
        for label, spec in specs.items():
            res = self._admin.list_offsets({tp: spec for tp in tps}, request_timeout=self.timeout)
            got[label] = {(tp.topic, tp.partition): self._result(f, f"list_offsets {label}").offset
                          for tp, f in res.items()}
        res = self._admin.list_offsets({tp: OffsetSpec.latest() for tp in tps},
                                       isolation_level=IsolationLevel.READ_COMMITTED, request_timeout=self.timeout)
        got["stable"] = {(tp.topic, tp.partition): self._result(f, "list_offsets read_committed").offset
                         for tp, f in res.items()}
        for key in got["latest"]:
            out[key] = (got["earliest"].get(key, -1), got["latest"][key], got["stable"].get(key, -1))
        return out

    # ------------------------------------------------------------------ groups
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
        ``taken_at``: its log end offsets are sampled for the interpolated time lag)."""
        if taken_at is not None:
            self.sample(topics, taken_at)
        now = self.clock()
        errors, kinds = {}, []
        with self._credentials_checked():
            listing = self._result(self._admin.list_consumer_groups(request_timeout=self.timeout),
                                   "list_consumer_groups")
        for err in listing.errors:  # a group the listing could not describe (a coordinator refused)
            errors[f"list_consumer_groups {len(errors)}"] = str(err)
            exc = err if isinstance(err, KafkaException) else KafkaException(err)
            kinds.append(UNAUTHORIZED if authorization_failure(exc) else "kafka")
        group_ids = sorted(g.group_id for g in listing.valid)
        if not group_ids and not (set(kinds) & {UNAUTHORIZED}):
            # librdkafka can answer ListGroups with nothing but errors, or an empty list, when no broker
            # answered in time: "no group" must come from a cluster that answers (then the errors, a
            # broker down, are the source's errors), not stand in for an unreachable one (then it is down)
            with self._credentials_checked():
                self._admin.list_topics(timeout=self.timeout)
        lags = []
        for gid in group_ids:
            try:
                fut = self._admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(gid)],
                                                               request_timeout=self.timeout)[gid]
                committed = self._result(fut, f"list_consumer_group_offsets of {gid}").topic_partitions
            except KafkaException as exc:
                self._failed("Describe", "GROUP", gid, exc, errors, kinds, gid)
                continue
            for tp in committed:
                info = topics.get(tp.topic)
                if info is None or tp.offset < 0:
                    continue
                po = info.partitions.get(tp.partition)
                if po is None:
                    continue
                end = po.latest
                lag = max(end - tp.offset, 0)
                tl = TimeLag(0.0, EXACT) if lag == 0 else self._time_lag(tp.topic, tp.partition, tp.offset, now,
                                                                          errors, kinds)
                lags.append(GroupLag(gid, tp.topic, tp.partition, tp.offset, end, lag, tl.seconds,
                                     info.config.delete_retention_ms / 1000.0,
                                     info.config.min_compaction_lag_ms / 1000.0,
                                     latest_value_only(gid, self.cluster.latest_value_only_groups),
                                     tl.method, tl.reason))
        return GroupSnapshot(now, tuple(lags), errors, tuple(kinds),
                             None if listing.errors else frozenset(group_ids))

    def _time_lag(self, topic: str, partition: int, offset: int, now: float, errors: dict, kinds: list) -> TimeLag:
        """Exact (the timestamp of the record at ``offset``) when the record can be read, else interpolated
        from the log-end-offset samples. A topic whose Read was refused is not read again for
        READ_RETRY_SECONDS (a refusal per partition and refresh would cost a fetch each); then it is asked
        again, so that an ACL granted later brings the exact lag back."""
        refused_at = self._read_refused.get(topic)
        if refused_at is None or now - refused_at >= READ_RETRY_SECONDS:
            try:
                ts = self._timestamp_at(topic, partition, offset)
            except KafkaException as exc:
                self._failed("Read", "TOPIC", topic, exc, errors, kinds, f"read {topic}-{partition}@{offset}",
                             ": the time lag is interpolated from the log end offsets instead, not exact")
                self._read_refused[topic] = now
                ts = None
            else:
                self._read_refused.pop(topic, None)
            if ts is not None:
                return TimeLag(max(now - ts / 1000.0, 0.0), EXACT)
        return interpolated_lag(self._samples.get((topic, partition), ()), offset, now)

    def _timestamp_at(self, topic: str, partition: int, offset: int) -> int | None:
        """Timestamp of the first record at or after ``offset`` (compaction leaves gaps); cached. None when
        none came in time; KafkaException when the broker refused the fetch (an authorization error)."""
        key = (topic, partition, offset)
        if key in self._ts_cache:
            return self._ts_cache[key]
        if self._consumer is None:
            conf = _client_conf(self.cluster, self.timeout)
            conf.update({"group.id": "kafka-compaction-monitor-lookups", "enable.auto.commit": False,
                         "enable.auto.offset.store": False, "fetch.max.bytes": 1048576,
                         "max.partition.fetch.bytes": 1048576, "isolation.level": "read_uncommitted"})
            self._consumer = Consumer(conf)
        c = self._consumer
        c.assign([TopicPartition(topic, partition, offset)])
        ts = None
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            msg = c.poll(0.5)
            if msg is None:
                continue
            if msg.error():
                if msg.error().code() in AUTHORIZATION_ERRORS:
                    c.unassign()
                    raise KafkaException(msg.error())
                continue
            ts = msg.timestamp()[1]
            break
        c.unassign()
        if ts is not None:
            if len(self._ts_cache) > 100_000:
                self._ts_cache.clear()
            self._ts_cache[key] = ts
        return ts
