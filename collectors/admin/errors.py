"""What went wrong talking to Kafka, told once: a librdkafka error, exception or log line sorted into a
kind (``classify``), the broker it was about (``Failure.address``), and advice that fits the kind
(``advice``); a cluster that could not be reached named by its bootstrap address (``ClusterUnreachable``,
the one line a command prints and a source's last error).

Why one classifier: librdkafka tells a failed admin call only as ``_TRANSPORT`` ("Failed to get
metadata: Local: Broker transport failure"); the cause (refused, TLS, SASL, a name that does not
resolve) is in its log lines and error callback, which name the broker. The session
(``collectors.admin.client``) keeps each broker's latest failure from those (``collectors.admin.clientlog``)
and this module turns it into the kind and the sentence. The strings matched are librdkafka 2.16's own
(rdkafka_broker.c ``rd_kafka_broker_fail``, rdkafka_ssl.c, rdkafka_sasl.c), as captured from real runs
in tests/collectors/admin/test_kafkaerrors.py.

The kinds are ``source_errors_total{error}``'s values, shared with the HTTP sources where they mean the
same (boundedhttp): ``credentials`` for SASL refusing who we are, ``unauthorized`` for a broker refusing
a call for want of an ACL. Nothing here ever holds a password: librdkafka's texts carry none, and the
user is named only as kafka-acls names it."""

from __future__ import annotations

import re
from dataclasses import dataclass

from confluent_kafka import KafkaError, KafkaException

from boundedhttp import FetchError

REFUSED, TIMEOUT, TLS, SASL, AUTHORIZATION, UNKNOWN_HOST, OTHER = (
    "refused", "timeout", "tls", "credentials", "unauthorized", "unknown_host", "kafka")
# the kinds that mean the cluster was not reached (an authorization refusal is an answer from it)
UNREACHABLE = frozenset({REFUSED, TIMEOUT, TLS, SASL, UNKNOWN_HOST})
# which of a cluster's brokers' failures names the cause when they differ: the most specific first (one
# broker refusing a password says more than another timing out)
PRECEDENCE = (SASL, TLS, UNKNOWN_HOST, REFUSED, TIMEOUT, AUTHORIZATION, OTHER)
WORDS = {REFUSED: "connection refused", TIMEOUT: "no answer in time", TLS: "TLS handshake failed",
         SASL: "SASL authentication failed", AUTHORIZATION: "not authorized", UNKNOWN_HOST: "unknown host",
         OTHER: "Kafka error"}

_CODES = {KafkaError._RESOLVE: UNKNOWN_HOST, KafkaError._SSL: TLS, KafkaError._AUTHENTICATION: SASL,
          KafkaError.SASL_AUTHENTICATION_FAILED: SASL, KafkaError.ILLEGAL_SASL_STATE: SASL,
          KafkaError.UNSUPPORTED_SASL_MECHANISM: SASL, KafkaError._TIMED_OUT: TIMEOUT,
          KafkaError.REQUEST_TIMED_OUT: TIMEOUT, KafkaError.TOPIC_AUTHORIZATION_FAILED: AUTHORIZATION,
          KafkaError.GROUP_AUTHORIZATION_FAILED: AUTHORIZATION,
          KafkaError.CLUSTER_AUTHORIZATION_FAILED: AUTHORIZATION,
          KafkaError.TRANSACTIONAL_ID_AUTHORIZATION_FAILED: AUTHORIZATION,
          KafkaError.DELEGATION_TOKEN_AUTHORIZATION_FAILED: AUTHORIZATION}
# librdkafka's words, in the order tried (a SASL line on a sasl_ssl:// handle must not read as TLS: the
# handle is cut off first)
_TEXTS = ((re.compile(r"Connection refused", re.I), REFUSED),
          (re.compile(r"Failed to resolve|Name or service not known|nodename nor servname|name resolution", re.I),
           UNKNOWN_HOST),
          (re.compile(r"\bSASL\b|Authentication failed", re.I), SASL),
          # the handshake only: an established TLS connection the broker closes (idle, or an SSL client on a
          # SASL_SSL listener, closed "in state UP") is no TLS failure
          (re.compile(r"SSL handshake|SSL routines|\bTLS\b|certificate", re.I), TLS),
          # a TLS listener closes a plaintext client's first request (ApiVersion) without a word
          (re.compile(r"closed by peer.*state APIVERSION_QUERY"), TLS),
          (re.compile(r"timed out|timeout", re.I), TIMEOUT))
# a broker handle as librdkafka names it: [proto://]host:port/nodeid (or /bootstrap), after the thread tag
_HANDLE = re.compile(r"^(?:\[thrd:[^\]]*\]:\s*)?((?:[a-z_]+://)?(\[[^\]]+\]:\d+|[^\s/:]+:\d+)/\w+):\s*(.*)$", re.S)
_AFTER = re.compile(r"\s*\(after \d+ms in state \w+\)\s*$")


@dataclass(frozen=True)
class Failure:
    """One failure as librdkafka told it: ``kind``, the broker ``address`` (host:port; None when the text
    names none), ``handle`` (librdkafka's name of the broker connection, e.g.
    ``sasl_ssl://127.0.0.1:9093/bootstrap``) and ``detail`` (its words, timings cut)."""

    kind: str
    detail: str
    address: str | None = None
    handle: str | None = None

    def __str__(self) -> str:
        return f"{self.handle}: {self.detail}" if self.handle else self.detail


def classify(text: str, code: int | None = None) -> Failure:
    """A librdkafka error or log text (and its error code, when there is one) as a ``Failure``."""
    m = _HANDLE.match(text.strip())
    handle, address, rest = (m.group(1), m.group(2), m.group(3)) if m else (None, None, text.strip())
    kind = _CODES.get(code) if code is not None else None
    if kind is None:  # the words with the state librdkafka was in ("after 5ms in state APIVERSION_QUERY")
        kind = next((k for pattern, k in _TEXTS if pattern.search(rest)), OTHER)
    return Failure(kind, _AFTER.sub("", rest), address, handle)


def of_error(err: KafkaError) -> Failure:
    return classify(err.str(), err.code())


def of_exception(exc: BaseException) -> Failure:
    """A failed call's exception: a KafkaException by its KafkaError, a FetchError by its kind (ours:
    a result not had in time), a TimeoutError as a timeout."""
    if isinstance(exc, KafkaException) and exc.args and isinstance(exc.args[0], KafkaError):
        return of_error(exc.args[0])
    if isinstance(exc, FetchError):
        return Failure(exc.kind, exc.reason)
    if isinstance(exc, TimeoutError):
        return Failure(TIMEOUT, str(exc) or "timed out")
    return classify(str(exc))


def of_log_line(args: tuple) -> Failure | None:
    """A librdkafka log line (confluent-kafka's logger arguments: facility, client name, message) that
    tells a broker connection failing (facility FAIL, a broker named), else None."""
    if len(args) < 3 or args[0] != "FAIL":
        return None
    f = classify(str(args[-1]))
    return f if f.address is not None else None


def most_telling(failures) -> Failure | None:
    """Of several brokers' failures, the one whose kind says most (``PRECEDENCE``)."""
    return min(failures, key=lambda f: PRECEDENCE.index(f.kind) if f.kind in PRECEDENCE else len(PRECEDENCE),
               default=None)


def advice(kind: str, *, principal: str = "the client's principal", mechanism: str | None = None) -> str:
    """What to check for a failure of ``kind``: the settings meant are monitor.yaml's clusters[].client
    (librdkafka's names), the ACLs docs/security.md's table."""
    if kind == REFUSED:
        return ("is a broker listening there, and is that port its client listener's (listeners, "
                "advertised.listeners)?")
    if kind == TIMEOUT:
        return ("is the address reachable from here (routes, firewalls), is it a Kafka listener, is the broker "
                "overloaded? (timeouts.admin is the wait)")
    if kind == UNKNOWN_HOST:
        return ("the host name does not resolve from here: check its spelling and DNS (the names in the brokers' "
                "advertised.listeners must resolve here too)")
    if kind == TLS:
        return ("check security.protocol against the listener's (SSL or SASL_SSL for a TLS listener), "
                "ssl.ca.location (the CA that signed the brokers' certificates) and that the certificate names "
                "the host connected to (clusters[].client; docs/security.md)")
    if kind == SASL:
        return (f"the brokers refused the credentials of {principal} ({mechanism or 'SASL'}): check "
                "sasl.mechanism (one the listener enables), sasl.username and the password its reference in "
                "sasl.password resolves to (clusters[].client; docs/security.md)")
    if kind == AUTHORIZATION:
        return (f"grant {principal} the ACL docs/security.md lists for this call (kafka-acls --add "
                f"--allow-principal {principal} ...)")
    return "see librdkafka's message"


class ClusterUnreachable(FetchError):
    """The cluster at ``bootstrap`` was not reached (or refused who we are): the kind of the most telling
    failure its brokers gave, and one sentence naming the bootstrap address, the kind, the advice and
    librdkafka's own words: ``cannot reach the cluster at 127.0.0.1:9 (connection refused): is a broker
    listening there ...? (librdkafka: 127.0.0.1:9/bootstrap: Connect to ipv4#127.0.0.1:9 failed:
    Connection refused)``."""

    def __init__(self, bootstrap: str, failure: Failure, *, principal: str = "the client's principal",
                 mechanism: str | None = None):
        self.bootstrap, self.failure = bootstrap, failure
        self.sentence = (f"cannot reach the cluster at {bootstrap} ({WORDS.get(failure.kind, failure.kind)}): "
                         f"{advice(failure.kind, principal=principal, mechanism=mechanism)} (librdkafka: {failure})")
        super().__init__(f"bootstrap {bootstrap}", failure.kind, self.sentence)

    def __str__(self) -> str:
        return self.sentence


def unreachable_cause(exc: BaseException | None) -> ClusterUnreachable | None:
    """The ``ClusterUnreachable`` behind ``exc`` (itself, or what it was raised from), None when the
    failure was not the cluster being out of reach."""
    while exc is not None:
        if isinstance(exc, ClusterUnreachable):
            return exc
        exc = exc.__cause__ or exc.__context__
    return None
