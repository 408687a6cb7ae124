"""One cluster's admin clients and how their calls are told: librdkafka's settings (the cluster's
``client`` section passed through: SASL, TLS), a failed call's error kind (``unauthorized`` for a refusal,
naming the missing ACL; ``timeout``), a cluster out of reach named with the kind its brokers' failures
tell (``reached``: ``collectors.admin.errors``), librdkafka's own log lines through ``logging``
(``collectors.admin.clientlog``: each connection failure once per broker and kind), and the clients rebuilt
when their calls time out while the cluster answers its metadata (``REBUILD_AFTER_TIMED_OUT_REFRESHES``),
at most once per ``REBUILD_BACKOFF_SECONDS``.
The fetches (``collectors.admin.topics``, ``collectors.admin.groups``) ask through one ``AdminSession``;
what a refresh counts as up is theirs (``collectors.admin.source``)."""

from __future__ import annotations

import concurrent.futures
import logging
import threading
import time
from contextlib import contextmanager

from confluent_kafka import Consumer, KafkaError, KafkaException
from confluent_kafka.admin import AdminClient

from boundedhttp import FetchError
from collectors.admin.errors import (AUTHORIZATION, OTHER, TIMEOUT, ClusterUnreachable, Failure, most_telling,
                                    of_exception)
from collectors.admin.clientlog import ClientEvents
from monitor.settings.config import ClusterConfig

UNAUTHORIZED = AUTHORIZATION  # the error kind of a refused call (as boundedhttp's for an HTTP 401/403)
# Kafka's authorization error codes -> the resource type the missing ACL is on (kafka-acls' names)
AUTHORIZATION_ERRORS = {KafkaError.TOPIC_AUTHORIZATION_FAILED: "TOPIC",
                        KafkaError.GROUP_AUTHORIZATION_FAILED: "GROUP",
                        KafkaError.CLUSTER_AUTHORIZATION_FAILED: "CLUSTER"}
log = logging.getLogger("compaction_monitor.admin")
RESULT_MARGIN = 2.0  # seconds a result is waited for beyond the request timeout librdkafka has (``AdminSession.result``)
# A fetcher's clients (its AdminClient and its lookup Consumer) are rebuilt after this many refreshes in a
# row in which a call timed out while the cluster answered the refresh's metadata call (list_topics,
# list_consumer_groups). Why: after a broker restart librdkafka 2.16 can keep a group's coordinator
# cached on a broker handle it has decommissioned (debug: "Handle is terminating in state TRY_CONNECT";
# confluentinc/librdkafka#5511): every list_consumer_group_offsets then times out, for good (8 minutes
# watched), while a new client answers in 50 ms. One refresh: the first refresh after the broker answers
# again meets the stale handle, the second has a new client, so the lag is back within two refreshes
# (issue 35). A broker that really does not answer (a frozen JVM, a broker partitioned away) times out
# with the new client too, so rebuilds are spaced (``REBUILD_BACKOFF_SECONDS``).
REBUILD_AFTER_TIMED_OUT_REFRESHES = 1
# After a rebuild, the clients are not rebuilt again for this many seconds, however many refreshes time out
# meanwhile (issue 42). Why: a rebuild costs new connections to every broker (with TLS and SASL, a handshake
# and an authentication each) and a thread letting the old clients go, and against a frozen broker it buys
# nothing: the new client's calls to it time out as the old one's did. Every refresh rebuilt them while a
# broker stayed frozen. Issue 35's stale handle needs one rebuild, which comes at once when none came in the
# last minute (a broker restart: the refreshes while it was away did not answer their metadata, so did not
# rebuild); one seen within a minute of a rebuild waits out the rest of that minute.
REBUILD_BACKOFF_SECONDS = 60.0
REBUILD_LOG_SECONDS = 600.0  # a rebuild is logged at most this often per fetcher (with the count since)
# The metadata call (``AdminSession.list_topics``) waits for a usable broker in slices of this many seconds;
# between slices, when every bootstrap address has failed to connect (refused, TLS, SASL, unknown host:
# librdkafka's log lines), it gives up rather than wait out the admin timeout: a cluster that refuses
# says so in a second, not ten (librdkafka's list_topics waits the whole timeout whatever the brokers say)
LIST_SLICE_SECONDS = 1.0


# The client.id of the monitor's own connections (the cluster's ``client`` section may set another): what the
# brokers' request logs, quotas and metrics name a client by, and librdkafka's own log lines by their handle
# ("kafka-compaction-monitor#producer-3"), so an operator tells the monitor's requests from the applications'.
CLIENT_ID = "kafka-compaction-monitor"


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
    conf = {"bootstrap.servers": cluster.bootstrap_servers, "client.id": CLIENT_ID}
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
    (``AdminSession.result``)."""
    return of_exception(exc).kind == TIMEOUT


def call_error_kind(exc: BaseException) -> str:
    """The error kind of a failed call (``source_errors_total{error}``, the unknown series' reason):
    ``collectors.admin.errors``' (``unauthorized`` for a refusal, ``timeout``, ...)."""
    return of_exception(exc).kind


class AdminSession:
    """One fetcher's clients (its AdminClient and, made on first use, its lookup Consumer) and what its
    refreshes tally: calls that timed out (``timed_out``) and whether the cluster answered the refresh's
    metadata call (``answered``). A fetch runs its calls inside ``refresh()``, waits for each with
    ``result()`` and records each failure with ``failed()``."""

    def __init__(self, cluster: ClusterConfig, timeout: float = 10.0, clock=time.monotonic):
        self.cluster = cluster
        self.timeout = timeout
        self.clock = clock  # seconds, for the rebuilds' spacing (REBUILD_BACKOFF_SECONDS) and their log lines
        self.events = ClientEvents()  # its clients' librdkafka lines and errors: each broker's last failure
        self.admin = self._new_admin()
        self.consumer = None  # the lookup consumer (``lookup_consumer``), None until a record is read
        self.principal = principal(cluster)
        self._logged: set[tuple[str, str, str]] = set()  # refusals already logged: (operation, type, name)
        self.timed_out = 0  # calls of the current refresh that timed out
        self.answered = False  # the current refresh's metadata call answered
        self._timed_out_refreshes = 0  # refreshes in a row with a call timed out while the cluster answered
        self.rebuilds = 0  # clients rebuilt (REBUILD_AFTER_TIMED_OUT_REFRESHES)
        self.rebuilt_at: float | None = None  # when (``clock``) they last were (REBUILD_BACKOFF_SECONDS)
        self._rebuild_logged: tuple[float, int] | None = None  # (when, rebuilds then) of the last log line

    def _new_admin(self) -> AdminClient:
        return AdminClient({**_client_conf(self.cluster, self.timeout), "error_cb": self.events.error,
                            "logger": self.events})

    def lookup_consumer(self) -> Consumer:
        """The consumer that reads a record's timestamp (``collectors.admin.groups``), made on first use
        with the cluster's settings; dropped with the admin client on a rebuild."""
        if self.consumer is None:
            conf = _client_conf(self.cluster, self.timeout)
            conf.update({"group.id": "kafka-compaction-monitor-lookups", "enable.auto.commit": False,
                         "enable.auto.offset.store": False, "fetch.max.bytes": 1048576,
                         "max.partition.fetch.bytes": 1048576, "isolation.level": "read_uncommitted",
                         "error_cb": self.events.error, "logger": self.events})
            self.consumer = Consumer(conf)
        return self.consumer

    @contextmanager
    def refresh(self):
        """One refresh: its calls' timeouts are tallied; at its end, failed or not, librdkafka's log lines
        are served (poll) and, after ``REBUILD_AFTER_TIMED_OUT_REFRESHES`` refreshes in a row whose calls
        timed out while the cluster answered, the clients are rebuilt, unless they were less than
        ``REBUILD_BACKOFF_SECONDS`` ago (then at the first such refresh after that)."""
        self.timed_out, self.answered = 0, False
        try:
            yield
        finally:
            self._serve_logs()
            if self.timed_out and self.answered:
                self._timed_out_refreshes += 1
                if self._timed_out_refreshes >= REBUILD_AFTER_TIMED_OUT_REFRESHES and self._may_rebuild():
                    self._rebuild()
            elif self.answered:
                self._timed_out_refreshes = 0

    def _serve_logs(self) -> None:
        for client in (self.admin, self.consumer):
            if client is not None:
                try:
                    client.poll(0)
                except Exception:  # noqa: BLE001 - a closed client has nothing to serve
                    pass

    def _may_rebuild(self) -> bool:
        """No rebuild in the last ``REBUILD_BACKOFF_SECONDS`` (``clock``)."""
        return self.rebuilt_at is None or self.clock() - self.rebuilt_at >= REBUILD_BACKOFF_SECONDS

    def _rebuild(self) -> None:
        """New clients in place of those whose calls keep timing out (``REBUILD_AFTER_TIMED_OUT_REFRESHES``
        says why); the old ones are let go on a thread of their own (librdkafka's destroy waits for its
        broker threads). The log line says when the next rebuild may come (``REBUILD_BACKOFF_SECONDS``)."""
        old = (self.admin, self.consumer)
        self.admin, self.consumer, self._timed_out_refreshes = self._new_admin(), None, 0
        self.rebuilds += 1
        now = self.rebuilt_at = self.clock()
        if self._rebuild_logged is None or now - self._rebuild_logged[0] >= REBUILD_LOG_SECONDS:
            since = self.rebuilds - (self._rebuild_logged[1] if self._rebuild_logged else 0)
            self._rebuild_logged = (now, self.rebuilds)
            log.warning("cluster %s: %d call(s) timed out while the cluster answered its metadata: new admin "
                        "client%s (%d rebuild(s) since the last such line); no other rebuild for %gs, however "
                        "many calls time out meanwhile (a frozen broker times out with any client)",
                        self.cluster.name, self.timed_out, " and lookup consumer" if old[1] is not None else "",
                        since, REBUILD_BACKOFF_SECONDS)

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

    def failed(self, operation: str, resource_type: str, name: str, exc: BaseException, errors: dict,
               kinds: list, key: str, instead: str = "") -> None:
        """A failed call on one resource: its reason in ``errors[key]``; an authorization failure is of
        kind ``unauthorized``, names the ACL missing, and is logged once per (operation, resource)."""
        missing = authorization_failure(exc)
        if missing is None:
            errors[key] = str(exc)
            kinds.append(call_error_kind(exc))
            self.timed_out += timed_out(exc)
            return
        what = refusal(operation, missing, name if missing == resource_type != "CLUSTER" else "", self.principal)
        errors[key] = f"refused: no {what} ({exc.args[0].name()})"
        kinds.append(UNAUTHORIZED)
        if (operation, missing, name) not in self._logged:
            self._logged.add((operation, missing, name))
            log.warning("cluster %s (%s): %s: the broker refused %s (%s)%s; grant it with kafka-acls --add "
                        "--allow-principal %s --operation %s%s", self.cluster.name, self.cluster.bootstrap_servers,
                        key, what,
                        exc.args[0].name(), instead, self.principal, operation,
                        " --cluster" if missing == "CLUSTER" else
                        f" --{missing.lower()} {name if missing == resource_type else '<name>'}")

    def every_call_failed(self, what: str, asked: int, failed: list) -> None:
        """Raise (the source down, with the first error) when every one of ``asked`` calls of a kind failed
        without an answer (``failed``: their exceptions; refusals are answers and are not in it)."""
        if asked and len(failed) >= asked:
            exc = failed[0]
            raise FetchError(f"bootstrap {self.cluster.bootstrap_servers}", call_error_kind(exc),
                             f"{what} failed for all {asked}: {exc}") from None

    @contextmanager
    def reached(self):
        """The first call of a refresh (the cluster's metadata, or its group listing): failing, the cluster
        was not reached, and ``ClusterUnreachable`` says why from what its brokers' connections said
        (librdkafka itself says only "Broker transport failure"): refused, timeout, TLS, SASL (the
        principal and mechanism named, never a password), unknown host, with the advice for that kind."""
        self.events.reset()
        start = time.monotonic()
        try:
            yield
        except KafkaException as exc:
            self._serve_logs()  # the log lines and error callbacks that tell the brokers' failures
            raise self.unreachable(exc, time.monotonic() - start) from None

    def unreachable(self, exc: BaseException, waited: float = 0.0) -> ClusterUnreachable:
        """``exc`` (a failed first call, after ``waited`` seconds) as the cluster out of reach: the most
        telling failure of the bootstrap brokers (else of any broker; else ``exc``'s own words: a timeout
        when no broker was usable for the whole admin timeout, as a port that accepts and never answers)."""
        failure = (most_telling(self.events.of(self.bootstrap_addresses())) or most_telling(self.events.of())
                   or of_exception(exc))
        if failure.kind == OTHER and waited >= 0.9 * self.timeout:
            failure = Failure(TIMEOUT, f"no broker usable within {self.timeout:g}s ({failure.detail})")
        return ClusterUnreachable(self.cluster.bootstrap_servers, failure, principal=self.principal,
                                  mechanism=self.cluster.client.get("sasl.mechanism"))

    def bootstrap_addresses(self) -> set[str]:
        """host:port of each bootstrap server, as librdkafka names its bootstrap broker handles."""
        return {s.strip().split("://")[-1] for s in (self.cluster.bootstrap_servers or "").split(",") if s.strip()}

    def list_topics(self):
        """The cluster's metadata (``AdminClient.list_topics``) within the admin timeout, asked in slices of
        ``LIST_SLICE_SECONDS``: after a slice in which no broker was usable, when every bootstrap address
        has failed to connect, the failure is raised at once (``reached`` names it)."""
        deadline = time.monotonic() + self.timeout
        while True:
            start = time.monotonic()
            wait = max(min(deadline - start, LIST_SLICE_SECONDS), 0.001)
            try:
                return self.admin.list_topics(timeout=wait)
            except KafkaException:
                now = time.monotonic()
                # the whole wait spent, or librdkafka's own answer before the slice ended: as it said
                if now >= deadline or now - start < 0.9 * wait:
                    raise
                self._serve_logs()
                addresses = self.bootstrap_addresses()
                if addresses and len({f.address for f in self.events.of(addresses)}) >= len(addresses):
                    raise

    def result(self, fut, what: str):
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
        if self.consumer is not None:
            self.consumer.close()
            self.consumer = None
        self.admin = None
