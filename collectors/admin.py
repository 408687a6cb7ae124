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

A refresh is up only when it got what it asked for (issue 35): a call that times out or fails (no
answer, a broker's error) counts against it. When every call of a kind fails (every topic's
describe_configs, every partition's list_offsets, every group's list_consumer_group_offsets) the
refresh raises (the source is down, with the error); when some fail, the resources they were about are
unknown in the snapshot with the call and the reason (``AdminSnapshot.unknown``,
``GroupSnapshot.unknown``: exported as ``topic_admin_unknown`` and ``consumer_group_lag_unknown``),
never silently missing. A refusal for want of an ACL is an answer, not a failure: it never puts the
source down (the refused resources are reported as such).

A client whose calls time out while the cluster answers its metadata is rebuilt
(``REBUILD_AFTER_TIMED_OUT_REFRESHES``); librdkafka's own log lines go through ``logging``
(``LibrdkafkaLog``), each kind of line at most once per ``LIBRDKAFKA_REPEAT_SECONDS``.
"""

from __future__ import annotations

import concurrent.futures
import logging
import re
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field

from confluent_kafka import (Consumer, ConsumerGroupTopicPartitions, IsolationLevel, KafkaError, KafkaException,
                             TopicPartition)
from confluent_kafka.admin import AdminClient, ConfigResource, OffsetSpec, ResourceType

from boundedhttp import FetchError
from monitor.config import ClusterConfig
from monitor.consumers import EXACT, TimeLag, add_sample, interpolated_lag, latest_value_only
from monitor.topicconfig import (CLEANER_SETTINGS, DEFAULTS, BrokerSetting, ConfigValueError, TopicConfig,
                                 broker_cleaner_settings)

# every topic config the model reads (monitor.topicconfig.DEFAULTS, the one list): file.delete.delay.ms too,
# which tells a leftover .swap from a swap in progress (without it a topic's own value was taken as Kafka's
# default and a planted leftover stayed "a swap in progress" for 60 s)
COMPACTION_KEYS = tuple(DEFAULTS)
TRANSACTION_MAX_TIMEOUT = "transaction.max.timeout.ms"
UNAUTHORIZED = "unauthorized"  # the error kind of a refused call (as boundedhttp's for an HTTP 401/403)
# Kafka's authorization error codes -> the resource type the missing ACL is on (kafka-acls' names)
AUTHORIZATION_ERRORS = {KafkaError.TOPIC_AUTHORIZATION_FAILED: "TOPIC",
                        KafkaError.GROUP_AUTHORIZATION_FAILED: "GROUP",
                        KafkaError.CLUSTER_AUTHORIZATION_FAILED: "CLUSTER"}
log = logging.getLogger("compaction_monitor.admin")
READ_RETRY_SECONDS = 600.0  # how long a topic whose Read was refused goes without another try
RESULT_MARGIN = 2.0  # seconds a result is waited for beyond the request timeout librdkafka has (``_result``)
# A fetcher's clients (its AdminClient and its lookup Consumer) are rebuilt after this many refreshes in a
# row in which a call timed out while the cluster answered the refresh's metadata call (list_topics,
# list_consumer_groups). Why: after a broker restart librdkafka 2.16 can keep a group's coordinator
# cached on a broker handle it has decommissioned (debug: "Handle is terminating in state TRY_CONNECT";
# confluentinc/librdkafka#5511): every list_consumer_group_offsets then times out, for good (8 minutes
# watched), while a new client answers in 50 ms. One refresh: the first refresh after the broker answers
# again meets the stale handle, the second has a new client, so the lag is back within two refreshes
# (issue 35). A broker that really does not answer times out with the new client too: the cost is one
# reconnect per refresh, no more.
REBUILD_AFTER_TIMED_OUT_REFRESHES = 1
REBUILD_LOG_SECONDS = 600.0  # a rebuild is logged at most this often per fetcher (with the count since)
# librdkafka's log lines (``LibrdkafkaLog``): each kind of line (its facility and text, numbers aside)
# at most once per this many seconds, with the count of those left out; a broker down makes every client
# log a failed connect per broker handle and retry (~19 lines a second for one collector, issue 35)
LIBRDKAFKA_REPEAT_SECONDS = 60.0
LIBRDKAFKA_MAX_KINDS = 1000  # kinds of line remembered (the table is cleared past it: bounded memory)
TIMEOUT_CODES = frozenset({KafkaError._TIMED_OUT, KafkaError.REQUEST_TIMED_OUT})


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
    # topic -> (call, reason): a topic a call failed or was refused for (describe_configs: its config and
    # whether it is compacted are unknown; list_offsets: some of its offsets are, -1), reason an error kind
    unknown: dict = field(default_factory=dict)

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


def timed_out(exc: BaseException) -> bool:
    """The call got no answer in time: librdkafka's local or the broker's request timeout, or ours
    (``AdminFetcher._result``)."""
    if isinstance(exc, FetchError):
        return exc.kind == "timeout"
    err = exc.args[0] if isinstance(exc, KafkaException) and exc.args else None
    return isinstance(err, KafkaError) and err.code() in TIMEOUT_CODES


def call_error_kind(exc: BaseException) -> str:
    """The error kind of a failed call (``source_errors_total{error}``, the unknown series' reason)."""
    if authorization_failure(exc):
        return UNAUTHORIZED
    if timed_out(exc):
        return "timeout"
    return exc.kind if isinstance(exc, FetchError) else "kafka"


class LibrdkafkaLog:
    """librdkafka's log lines into ``logging`` (confluent-kafka's ``logger`` setting: it calls
    ``log(level, fmt, facility, client name, message)``; the lines are served by the client's poll()).
    Each kind of line (level, facility and message with its numbers taken out: a failed connect says
    how long it took) goes out at most once per ``repeat`` seconds; the next one after that says how many
    like it were left out. Thread-safe: the fetchers' threads share one."""

    _NUMBERS = re.compile(r"\d+")

    def __init__(self, logger: logging.Logger | None = None, repeat: float = LIBRDKAFKA_REPEAT_SECONDS,
                 clock=time.monotonic):
        self.logger = logger or logging.getLogger("compaction_monitor.librdkafka")
        self.repeat, self.clock = repeat, clock
        self._seen: dict[tuple, list] = {}  # kind -> [last logged at, left out since]
        self._lock = threading.Lock()

    def log(self, level: int, fmt: str, *args) -> None:
        facility, message = (args[0], args[-1]) if len(args) >= 2 else ("", fmt % args if args else fmt)
        key = (level, facility, self._NUMBERS.sub("N", str(message)))
        now = self.clock()
        with self._lock:
            seen = self._seen.get(key)
            if seen is not None and now - seen[0] < self.repeat:
                seen[1] += 1
                return
            if len(self._seen) >= LIBRDKAFKA_MAX_KINDS:
                self._seen.clear()
            left_out = seen[1] if seen is not None else 0
            self._seen[key] = [now, 0]
        more = f" ({left_out} more like it in the last {self.repeat:g}s not logged)" if left_out else ""
        self.logger.log(level, "librdkafka: " + fmt + "%s", *args, more)


LIBRDKAFKA_LOG = LibrdkafkaLog()  # one for every client: a line repeated by several clients goes out once


class AdminFetcher:
    def __init__(self, cluster: ClusterConfig, timeout: float = 10.0, clock=time.time):
        self.cluster = cluster
        self.timeout = timeout
        self.clock = clock
        self._auth_error: str | None = None  # librdkafka's last SASL refusal (error_cb), for the message
        self._admin = self._new_admin()
        self._consumer = None
        self._ts_cache: dict[tuple[str, int, int], int | None] = {}
        self.principal = principal(cluster)
        self._logged: set[tuple[str, str, str]] = set()  # refusals already logged: (operation, type, name)
        self._samples: dict[tuple[str, int], tuple] = {}  # (topic, partition) -> log-end-offset samples
        self._sampled_at: float | None = None  # the admin snapshot the samples last took
        self._read_refused: dict[str, float] = {}  # topic -> when Read was refused (no exact time lag)
        self._timed_out = 0  # calls of the current refresh that timed out
        self._answered = False  # the current refresh's metadata call answered
        self._timed_out_refreshes = 0  # refreshes in a row with a call timed out while the cluster answered
        self.rebuilds = 0  # clients rebuilt (REBUILD_AFTER_TIMED_OUT_REFRESHES)
        self._rebuild_logged: tuple[float, int] | None = None  # (when, rebuilds then) of the last log line

    def _new_admin(self) -> AdminClient:
        return AdminClient({**_client_conf(self.cluster, self.timeout), "error_cb": self._on_client_error,
                            "logger": LIBRDKAFKA_LOG})

    @contextmanager
    def _refresh(self):
        """One refresh: its calls' timeouts are tallied; at its end, failed or not, librdkafka's log lines
        are served (poll) and, after ``REBUILD_AFTER_TIMED_OUT_REFRESHES`` refreshes in a row whose calls
        timed out while the cluster answered, the clients are rebuilt."""
        self._timed_out, self._answered = 0, False
        try:
            yield
        finally:
            self._serve_logs()
            if self._timed_out and self._answered:
                self._timed_out_refreshes += 1
                if self._timed_out_refreshes >= REBUILD_AFTER_TIMED_OUT_REFRESHES:
                    self._rebuild()
            elif self._answered:
                self._timed_out_refreshes = 0

    def _serve_logs(self) -> None:
        for client in (self._admin, self._consumer):
            if client is not None:
                try:
                    client.poll(0)
                except Exception:  # noqa: BLE001 - a closed client has nothing to serve
                    pass

    def _rebuild(self) -> None:
        """New clients in place of those whose calls keep timing out (``REBUILD_AFTER_TIMED_OUT_REFRESHES``
        says why); the old ones are let go on a thread of their own (librdkafka's destroy waits for its
        broker threads)."""
        old = (self._admin, self._consumer)
        self._admin, self._consumer, self._timed_out_refreshes = self._new_admin(), None, 0
        self.rebuilds += 1
        now = time.monotonic()
        if self._rebuild_logged is None or now - self._rebuild_logged[0] >= REBUILD_LOG_SECONDS:
            since = self.rebuilds - (self._rebuild_logged[1] if self._rebuild_logged else 0)
            self._rebuild_logged = (now, self.rebuilds)
            log.warning("cluster %s: %d call(s) timed out while the cluster answered its metadata: new admin "
                        "client%s (%d rebuild(s) since the last such line)", self.cluster.name, self._timed_out,
                        " and lookup consumer" if old[1] is not None else "", since)

        def let_go(clients=old):
            admin, consumer = clients
            if consumer is not None:
                try:
                    consumer.close()
                except Exception:  # noqa: BLE001 - it is being thrown away
                    pass
            clients = admin = consumer = None  # noqa: F841 - the last references, dropped on this thread

        threading.Thread(target=let_go, name=f"admin-let-go-{self.cluster.name}", daemon=True).start()
        old = None

    def _failed(self, operation: str, resource_type: str, name: str, exc: BaseException, errors: dict,
                kinds: list, key: str, instead: str = "") -> None:
        """A failed call on one resource: its reason in ``errors[key]``; an authorization failure is of
        kind ``unauthorized``, names the ACL missing, and is logged once per (operation, resource)."""
        missing = authorization_failure(exc)
        if missing is None:
            errors[key] = str(exc)
            kinds.append(call_error_kind(exc))
            self._timed_out += timed_out(exc)
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
    def _every_call_failed(self, what: str, asked: int, failed: list) -> None:
        """Raise (the source down, with the first error) when every one of ``asked`` calls of a kind failed
        without an answer (``failed``: their exceptions; refusals are answers and are not in it)."""
        if asked and len(failed) >= asked:
            exc = failed[0]
            raise FetchError(f"bootstrap {self.cluster.bootstrap_servers}", call_error_kind(exc),
                             f"{what} failed for all {asked}: {exc}") from None

    def topics(self) -> AdminSnapshot:
        with self._refresh():
            return self._topics()

    def _topics(self) -> AdminSnapshot:
        now = self.clock()
        with self._credentials_checked():
            md = self._admin.list_topics(timeout=self.timeout)
        self._answered = True
        names = [t for t in md.topics if not md.topics[t].error]
        resources = [ConfigResource(ResourceType.TOPIC, t) for t in names]
        errors, kinds, refused, unknown, failed = {}, [], {}, {}, []
        configs = {}
        if resources:
            for res, fut in self._admin.describe_configs(resources, request_timeout=self.timeout).items():
                try:
                    entries = self._result(fut, f"describe_configs of topic {res.name}")
                except (KafkaException, FetchError) as exc:
                    self._failed("DescribeConfigs", "TOPIC", res.name, exc, errors, kinds, res.name)
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
            self._every_call_failed("describe_configs of the topics", len(resources), failed)
        compacted = {t: c for t, c in configs.items() if c.compacted}
        tps = [TopicPartition(t, p) for t in compacted for p in md.topics[t].partitions]
        offsets = self._offsets(tps, errors, kinds, unknown) if tps else {}
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
                             self.principal, unknown)

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
            except (KafkaException, FetchError) as exc:
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
    def _offsets(self, tps, errors: dict, kinds: list, unknown: dict) -> dict:
        """(topic, partition) -> (earliest, latest, last stable) offsets, -1 where unknown. A partition's
        failed ListOffsets makes its topic unknown (``unknown[topic]``: ``("list_offsets", kind)``), its
        error in ``errors``; every partition's latest offset failed: raise (the source is down)."""
        out = {}
        specs = {"earliest": (OffsetSpec.earliest(), IsolationLevel.READ_UNCOMMITTED),
                 "latest": (OffsetSpec.latest(), IsolationLevel.READ_UNCOMMITTED),
                 "read_committed": (OffsetSpec.latest(), IsolationLevel.READ_COMMITTED)}
        got, failed_latest = {}, []
        for label, (spec, isolation) in specs.items():
            res = self._admin.list_offsets({tp: spec for tp in tps}, isolation_level=isolation,
                                           request_timeout=self.timeout)
            got[label] = {}
            for tp, f in res.items():
                try:
                    got[label][(tp.topic, tp.partition)] = self._result(f, f"list_offsets {label}").offset
                except (KafkaException, FetchError) as exc:
                    key = f"list_offsets {label} {tp.topic}-{tp.partition}"
                    self._failed("Describe", "TOPIC", tp.topic, exc, errors, kinds, key)
                    unknown.setdefault(tp.topic, ("list_offsets", call_error_kind(exc)))
                    if label == "latest" and not authorization_failure(exc):
                        failed_latest.append(exc)
            if label == "latest":
                self._every_call_failed("list_offsets of the compacted partitions", len(tps), failed_latest)
        for key in got["latest"]:
            out[key] = (got["earliest"].get(key, -1), got["latest"][key], got["read_committed"].get(key, -1))
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
        ``taken_at``: its log end offsets are sampled for the interpolated time lag). A group whose
        offsets could not be had is unknown (``GroupSnapshot.unknown``); every group's: raise."""
        with self._refresh():
            return self._group_lags(topics, taken_at)

    def _group_lags(self, topics: dict, taken_at: float | None) -> GroupSnapshot:
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
            kinds.append(call_error_kind(exc))
        group_ids = sorted(g.group_id for g in listing.valid)
        self._answered = bool(group_ids) or not listing.errors
        if not group_ids and not (set(kinds) & {UNAUTHORIZED}):
            # librdkafka can answer ListGroups with nothing but errors, or an empty list, when no broker
            # answered in time: "no group" must come from a cluster that answers (then the errors, a
            # broker down, are the source's errors), not stand in for an unreachable one (then it is down)
            with self._credentials_checked():
                self._admin.list_topics(timeout=self.timeout)
            self._answered = True
        lags, unknown, failed = [], {}, []
        for gid in group_ids:
            try:
                fut = self._admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(gid)],
                                                               request_timeout=self.timeout)[gid]
                committed = self._result(fut, f"list_consumer_group_offsets of {gid}").topic_partitions
            except (KafkaException, FetchError) as exc:
                self._failed("Describe", "GROUP", gid, exc, errors, kinds, gid)
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
                                     latest_value_only(gid, self.cluster.latest_value_only_groups),
                                     tl.method, tl.reason))
        self._every_call_failed("list_consumer_group_offsets of the groups", len(group_ids), failed)
        return GroupSnapshot(now, tuple(lags), errors, tuple(kinds),
                             None if listing.errors else frozenset(group_ids), unknown)

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
                         "max.partition.fetch.bytes": 1048576, "isolation.level": "read_uncommitted",
                         "logger": LIBRDKAFKA_LOG})
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
        if ts is None:
            self._timed_out += 1  # no record in time: a lookup consumer stuck as the admin client can be
        if ts is not None:
            if len(self._ts_cache) > 100_000:
                self._ts_cache.clear()
            self._ts_cache[key] = ts
        return ts
