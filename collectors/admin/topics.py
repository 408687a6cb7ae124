"""The admin source's topics refresh: which topics are compacted and their effective configs
(describe_configs on each listed topic), each compacted partition's offsets (earliest, log end, and the
leader's last stable offset: ListOffsets at READ_COMMITTED), its replicas and ISR (the replicas out of it
tracked across refreshes: ``collectors.admin.replicas``), and each broker's configs (describe_configs on
its BROKER resource): ``transaction.max.timeout.ms`` (the largest of them), ``producer.id.expiration.ms``
and the log cleaner's settings (``log.cleaner.threads``, ...).

Up only when it got what it asked for (``collectors.admin.source``): every topic's describe_configs failing, or
every partition's latest offset, raises (the source is down); some failing makes those topics unknown in
the snapshot (``AdminSnapshot.unknown``) with the call and the reason. A refusal for want of an ACL is
an answer: the topic is reported as refused, the source stays up.
"""

from __future__ import annotations

import time

from confluent_kafka import IsolationLevel, KafkaException, TopicPartition
from confluent_kafka.admin import ConfigResource, ConfigSource, OffsetSpec, ResourceType

from boundedhttp import FetchError
from collectors.admin.client import AdminSession, authorization_failure, call_error_kind
from collectors.admin.errors import TIMEOUT
from collectors.admin.state import AdminSnapshot, PartitionOffsets, TopicInfo
from collectors.admin.replicas import OutOfSyncTracker
from monitor.model.replicasafety import PRODUCER_ID_EXPIRATION
from monitor.model.topicconfig import CLEANER_SETTINGS, DEFAULTS, ConfigValueError, TopicConfig, broker_cleaner_settings
from monitor.model.transactions import TRANSACTION_MAX_TIMEOUT


# every topic config the model reads (monitor.model.topicconfig.DEFAULTS, the one list): file.delete.delay.ms too,
# which tells a leftover .swap from a swap in progress (without it a topic's own value was taken as Kafka's
# default and a planted leftover stayed "a swap in progress" for 60 s)
COMPACTION_KEYS = tuple(DEFAULTS)
LISTED_PARTITIONS = 3  # a failed ListOffsets names this many of the partitions it covered, then counts the rest



class Described(dict):
    """A broker's describe_configs answer: each config's value by name, and its Kafka ConfigSource name
    (``sources``: DYNAMIC_BROKER_CONFIG, DYNAMIC_DEFAULT_BROKER_CONFIG, STATIC_BROKER_CONFIG, DEFAULT_CONFIG),
    which says whether a fix must name this broker (``BrokerSetting.per_broker``)."""

    def __init__(self, entries):
        super().__init__((k, e.value) for k, e in entries.items())
        self.sources = {k: _source_name(getattr(e, "source", None)) for k, e in entries.items()}


def _source_name(source) -> str | None:
    try:  # confluent-kafka gives a ConfigSource, or its number
        return ConfigSource(source).name
    except ValueError:
        return None

class TopicFetch:
    """``topics()``: one ``AdminSnapshot`` per refresh, asked through ``session``; ``clock`` stamps it."""

    def __init__(self, session: AdminSession, clock=time.time):
        self.session = session
        self.clock = clock
        self.out_of_sync = OutOfSyncTracker()  # across refreshes: since when each replica is out of the ISR

    def topics(self) -> AdminSnapshot:
        with self.session.refresh():
            return self._topics()

    def _topics(self) -> AdminSnapshot:
        now = self.clock()
        with self.session.reached():
            md = self.session.list_topics()
        self.session.answered = True
        names = [t for t in md.topics if not md.topics[t].error]
        resources = [ConfigResource(ResourceType.TOPIC, t) for t in names]
        errors, kinds, refused, unknown, failed = {}, [], {}, {}, []
        configs = {}
        if resources:
            asked = self.session.admin.describe_configs(resources, request_timeout=self.session.timeout)
            for res, fut in asked.items():
                try:
                    entries = self.session.result(fut, f"describe_configs of topic {res.name}")
                except (KafkaException, FetchError) as exc:
                    self.session.failed("DescribeConfigs", "TOPIC", res.name, exc, errors, kinds, res.name)
                    refused[res.name] = errors[res.name]
                    unknown[res.name] = ("describe_configs", call_error_kind(exc))
                    if not authorization_failure(exc):
                        failed.append(exc)
                    continue
                raw = {k: entries[k].value for k in COMPACTION_KEYS if k in entries}
                try:
                    configs[res.name] = TopicConfig.from_strings(raw)
                except ConfigValueError as exc:
                    errors[res.name] = str(exc)
                    refused[res.name] = f"malformed config: {exc}"
            self.session.every_call_failed("describe_configs of the topics", len(resources), failed)
        compacted = {t: c for t, c in configs.items() if c.compacted}
        tps = [TopicPartition(t, p) for t in compacted for p in md.topics[t].partitions]
        offsets = self._offsets(tps, md, errors, kinds, unknown) if tps else {}
        topics = {}
        for t, cfg in compacted.items():
            parts = {}
            for p, pm in md.topics[t].partitions.items():
                e, l, s = offsets.get((t, p), (-1, -1, -1))
                parts[p] = PartitionOffsets(pm.leader, e, l, s, tuple(pm.replicas), tuple(pm.isrs))
            topics[t] = TopicInfo(t, cfg, parts)
        live = frozenset(md.brokers)
        out_of_sync = self.out_of_sync.update(now, {(t, p): (po.replicas, po.isr, live)
                                                    for t, info in topics.items() for p, po in info.partitions.items()})
        topic_configs, configs = configs, self._broker_configs(md.brokers, errors, kinds)
        return AdminSnapshot(now, topics, errors, self._transaction_max_timeout(configs, errors),
                             self._cleaner_settings(configs), frozenset(names),
                             {t: c for t, c in topic_configs.items() if not c.compacted}, refused, tuple(kinds),
                             self.session.principal, unknown, out_of_sync, self._producer_id_expiration(configs))

    def _broker_configs(self, brokers, errors: dict, kinds: list) -> dict:
        """Each broker's configs (describe_configs on its BROKER resource: the values in force, Kafka's
        defaults included): broker id -> {name: value} or, when it refused or did not answer, the reason
        (a str)."""
        out = {}
        for bid in sorted(brokers):  # one request per broker: a BROKER resource is answered by that broker
            res = ConfigResource(ResourceType.BROKER, str(bid))
            try:
                asked = self.session.admin.describe_configs([res], request_timeout=self.session.timeout)
                entries = self.session.result(asked[res], f"describe_configs of broker {bid}")
                out[bid] = Described(entries)
            except (KafkaException, FetchError) as exc:
                key = f"broker {bid} describe_configs"
                self.session.failed("DescribeConfigs", "CLUSTER", "", exc, errors, kinds, key)
                out[bid] = f"describe_configs of broker {bid} refused: {errors[key]}"
        return out

    @staticmethod
    def _producer_id_expiration(configs: dict) -> dict:
        """Each broker's producer.id.expiration.ms (monitor.model.replicasafety's second limit); a broker
        that refused or did not list it is left out: unknown, not Kafka's default."""
        out = {}
        for bid, got in configs.items():
            try:
                out[bid] = int(got[PRODUCER_ID_EXPIRATION])
            except (KeyError, TypeError, ValueError):
                continue
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
                out[str(bid)] = broker_cleaner_settings(file=self.session.cluster.cleaner, admin_error=got)
                continue
            admin = {k: got[k] for k in CLEANER_SETTINGS if got.get(k) is not None}
            try:
                settings = broker_cleaner_settings(admin=admin, file=self.session.cluster.cleaner,
                                                   admin_error=f"broker {bid} did not list it",
                                                   kafka_sources=getattr(got, "sources", None))
            except ConfigValueError as exc:
                settings = broker_cleaner_settings(file=self.session.cluster.cleaner,
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
    # So the check is on the LSO (ListOffsets at READ_COMMITTED, below; monitor.model.lsocheck).
    def _offsets(self, tps, md, errors: dict, kinds: list, unknown: dict) -> dict:
        """(topic, partition) -> (earliest, latest, last stable) offsets, -1 where unknown. A partition's
        failed ListOffsets makes its topic unknown (``unknown[topic]``: ``("list_offsets", kind)``). The
        failures are told once per call and broker (``_offsets_failed``), not once per partition; every
        partition's latest offset failed: raise (the source is down)."""
        out = {}
        specs = {"earliest": (OffsetSpec.earliest(), IsolationLevel.READ_UNCOMMITTED),
                 "latest": (OffsetSpec.latest(), IsolationLevel.READ_UNCOMMITTED),
                 "read_committed": (OffsetSpec.latest(), IsolationLevel.READ_COMMITTED)}
        got = {}
        for label, (spec, isolation) in specs.items():
            res = self.session.admin.list_offsets({tp: spec for tp in tps}, isolation_level=isolation,
                                                  request_timeout=self.session.timeout)
            got[label], failures = {}, []
            for tp, f in res.items():
                try:
                    got[label][(tp.topic, tp.partition)] = self._offset(f, label)
                except (KafkaException, FetchError) as exc:
                    failures.append((tp, exc))
                    unknown.setdefault(tp.topic, ("list_offsets", call_error_kind(exc)))
            told = self._offsets_failed(label, failures, md, errors, kinds)
            if label == "latest" and failures and len(failures) == len(tps) and not any(
                    authorization_failure(exc) for _, exc in failures):
                exc = failures[0][1]
                raise FetchError(f"bootstrap {self.session.cluster.bootstrap_servers}", call_error_kind(exc),
                                 f"list_offsets of the compacted partitions failed for all {len(tps)}: "
                                 + "; ".join(told))
        for key in got["latest"]:
            out[key] = (got["earliest"].get(key, -1), got["latest"][key], got["read_committed"].get(key, -1))
        return out

    def _offset(self, fut, label: str) -> int:
        """One partition's offset of a ListOffsets call. An earliest or latest offset is never negative
        when the leader answered: librdkafka 2.16 gives -1001 (OFFSET_INVALID) and no error for a
        partition whose leader did not answer within the request timeout (seen on a frozen broker:
        tests/collectors/admin/test_kafkaerrors_frozen.py), which was taken for an offset; it is a
        timeout."""
        offset = self.session.result(fut, f"list_offsets {label}").offset
        if offset < 0:
            raise FetchError(f"bootstrap {self.session.cluster.bootstrap_servers}", TIMEOUT,
                             f"list_offsets {label}: offset {offset} and no error (librdkafka's mark for a "
                             "partition whose leader did not answer in time)")
        return offset

    def _offsets_failed(self, label: str, failures: list, md, errors: dict, kinds: list) -> list[str]:
        """One ListOffsets call's failed partitions (``failures``: (TopicPartition, exception)) told once per
        broker and kind of error, naming the broker (its id and address, from the metadata: librdkafka
        sends a partition's request to its leader) and how many partitions it covered, with the first few;
        a refusal once per topic (the ACL it names is the topic's). Why: a broker that does not answer
        fails every partition it leads alike, and one error per partition was as many log lines, counts in
        ``source_errors_total`` and keys in the snapshot's errors, the broker never named. Returns the
        ``key: reason`` lines it added."""
        told, groups = [], {}
        for tp, exc in failures:
            if authorization_failure(exc):
                key = f"list_offsets {label} {tp.topic}"
                if key not in errors:
                    self.session.failed("Describe", "TOPIC", tp.topic, exc, errors, kinds, key)
                    told.append(f"{key}: {errors[key]}")
                continue
            try:
                leader = md.topics[tp.topic].partitions[tp.partition].leader
            except (AttributeError, KeyError):
                leader = -1
            groups.setdefault((leader, call_error_kind(exc)), []).append((tp, exc))
        for (leader, kind), group in groups.items():
            broker = md.brokers.get(leader) if leader is not None and leader >= 0 else None
            where = (f"broker {leader} ({broker.host}:{broker.port})" if broker is not None
                     else f"broker {leader}" if leader is not None and leader >= 0 else "no leader")
            names = [f"{tp.topic}-{tp.partition}" for tp, _ in group]
            shown = ", ".join(names[:LISTED_PARTITIONS]) + (
                f" and {len(names) - LISTED_PARTITIONS} more" if len(names) > LISTED_PARTITIONS else "")
            key = f"list_offsets {label} to {where}, {len(group)} partition(s)"
            if key in errors:  # the same broker failed as many partitions another way
                key = f"{key} ({kind})"
            self.session.failed("Describe", "TOPIC", "", group[0][1], errors, kinds, key)
            errors[key] = f"{errors[key]} (unknown: {shown})"
            told.append(f"{key}: {errors[key]}")
        return told
