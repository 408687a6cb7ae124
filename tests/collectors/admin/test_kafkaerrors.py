"""The classifier of what librdkafka says (collectors.admin.errors): each kind told from librdkafka 2.16's
own words, the broker named, the advice that fits the kind, and the sentence of a cluster out of reach.

Every text below was captured from a real run (confluent-kafka 2.16.1, librdkafka 2.16.0) against what
the suite starts: a closed loopback port, a name under .invalid, a socket that accepts and never speaks
(refused, unknown host, timeout); the session ``kafka`` broker (PLAINTEXT) reached over SSL and
SASL_PLAINTEXT; the ``kafka_cluster`` (SASL_SSL) reached over PLAINTEXT and SSL, without its CA, with a
wrong password, an unsupported mechanism, and as the user ``blind`` (no ACL). The live runs themselves
are asserted in test_kafkaerrors_cluster.py and tests/cli/test_unreachable_cluster.py."""

from __future__ import annotations

import re

import pytest
from confluent_kafka import KafkaError, KafkaException

from boundedhttp import FetchError
from collectors.admin.errors import (AUTHORIZATION, OTHER, REFUSED, SASL, TIMEOUT, TLS, UNKNOWN_HOST, UNREACHABLE,
                                    ClusterUnreachable, Failure, advice, classify, most_telling, of_error,
                                    of_exception, of_log_line, unreachable_cause)

# (what was done, librdkafka's text, the error code it came with (error_cb; None: a log line only), kind, broker)
CAPTURED = [
    ("closed port", "127.0.0.1:41471/bootstrap: Connect to ipv4#127.0.0.1:41471 failed: Connection refused "
     "(after 0ms in state CONNECT)", KafkaError._TRANSPORT, REFUSED, "127.0.0.1:41471"),
    ("no such host", "no-such-host.invalid:9092/bootstrap: Failed to resolve 'no-such-host.invalid:9092': Name "
     "or service not known (after 1ms in state CONNECT)", KafkaError._RESOLVE, UNKNOWN_HOST,
     "no-such-host.invalid:9092"),
    ("silent socket, socket.connection.setup.timeout.ms", "[thrd:127.0.0.1:57139/bootstrap]: 127.0.0.1:57139/"
     "bootstrap: Connection setup timed out in state APIVERSION_QUERY (after 1001ms in state APIVERSION_QUERY)",
     None, TIMEOUT, "127.0.0.1:57139"),
    ("silent socket, socket.timeout.ms", "[thrd:127.0.0.1:57139/bootstrap]: 127.0.0.1:57139/bootstrap: "
     "ApiVersionRequest failed: Local: Timed out: probably due to broker version < 0.10 (see api.version.request "
     "configuration) (after 1000ms in state APIVERSION_QUERY)", None, TIMEOUT, "127.0.0.1:57139"),
    ("SSL to a PLAINTEXT listener", "ssl://127.0.0.1:56497/bootstrap: SSL handshake failed: Disconnected: SSL "
     "connection closed by peer: connecting to a PLAINTEXT broker listener? (after 15ms in state SSL_HANDSHAKE)",
     KafkaError._TRANSPORT, TLS, "127.0.0.1:56497"),
    ("PLAINTEXT to a SASL_SSL listener", "[thrd:127.0.0.1:49283/bootstrap]: 127.0.0.1:49283/bootstrap: "
     "Disconnected: connection closed by peer: receive 0 after POLLIN (after 5ms in state APIVERSION_QUERY)",
     None, TLS, "127.0.0.1:49283"),
    ("SASL_SSL without the cluster's CA", "sasl_ssl://127.0.0.1:34651/bootstrap: SSL handshake failed: "
     "error:0A000086:SSL routines::certificate verify failed: broker certificate could not be verified, verify "
     "that ssl.ca.location is correctly configured or root CA certificates are installed (install "
     "ca-certificates package) (after 28ms in state SSL_HANDSHAKE)", KafkaError._SSL, TLS, "127.0.0.1:34651"),
    ("wrong SCRAM password", "sasl_ssl://127.0.0.1:34651/bootstrap: SASL authentication error: Authentication "
     "failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512 (after 326ms in "
     "state AUTH_REQ)", KafkaError._AUTHENTICATION, SASL, "127.0.0.1:34651"),
    ("a mechanism the listener does not enable", "sasl_ssl://127.0.0.1:54677/bootstrap: SASL PLAIN mechanism "
     "handshake failed: Broker: Unsupported SASL mechanism: broker's supported mechanisms: SCRAM-SHA-512 (after "
     "302ms in state AUTH_HANDSHAKE)", KafkaError._AUTHENTICATION, SASL, "127.0.0.1:54677"),
    ("SASL_PLAINTEXT to a PLAINTEXT listener", "sasl_plaintext://127.0.0.1:56497/bootstrap: SASL SCRAM-SHA-512 "
     "mechanism handshake failed: Broker: Request not valid in current SASL state: broker's supported "
     "mechanisms:  (after 2ms in state AUTH_HANDSHAKE)", KafkaError._AUTHENTICATION, SASL, "127.0.0.1:56497"),
    ("blind's describe_configs on a broker", "Cluster authorization failed.", KafkaError.CLUSTER_AUTHORIZATION_FAILED,
     AUTHORIZATION, None),
    ("blind's describe_configs on a topic", "Topic authorization failed.", KafkaError.TOPIC_AUTHORIZATION_FAILED,
     AUTHORIZATION, None),
    ("the failed list_topics itself", "Failed to get metadata: Local: Broker transport failure",
     KafkaError._TRANSPORT, OTHER, None),
    ("every broker down", "1/1 brokers are down", KafkaError._ALL_BROKERS_DOWN, OTHER, None),
    ("SSL to a SASL_SSL listener (closed once up)", "[thrd:ssl://127.0.0.1:34651/bootstrap]: ssl://127.0.0.1:34651/"
     "bootstrap: Disconnected: SSL connection closed by peer (after 4ms in state UP)", None, OTHER, "127.0.0.1:34651"),
]


@pytest.mark.parametrize("what,text,code,kind,broker", CAPTURED, ids=[c[0] for c in CAPTURED])
def test_each_captured_failure_is_told_its_kind_and_broker(what, text, code, kind, broker):
    got = of_error(KafkaError(code, text)) if code is not None else classify(text)
    assert (got.kind, got.address) == (kind, broker), got
    assert not re.search(r"\(after \d+ms in state \w+\)$", got.detail)  # the timing is cut
    if broker is not None:  # the handle as librdkafka names it stays in the sentence (its scheme too)
        assert str(got).startswith(text.split("]: ")[-1].split(": ")[0] + ": ")


def test_a_log_line_is_a_connection_failure_only_from_facility_fail_naming_a_broker():
    refused = CAPTURED[0][1]
    assert of_log_line(("FAIL", "rdkafka#producer-1", "[thrd:127.0.0.1:41471/bootstrap]: " + refused)).kind == REFUSED
    assert of_log_line(("REQTMOUT", "rdkafka#producer-3", "[thrd:127.0.0.1:57139/bootstrap]: 127.0.0.1:57139/"
                        "bootstrap: Timed out 1 in-flight, 0 retry-queued, 0 out-queue, 0 partially-sent requests")) \
        is None
    assert of_log_line(("FAIL", "rdkafka#producer-1", "Disconnected")) is None


def test_an_exception_is_told_by_its_error_or_its_kind():
    assert of_exception(KafkaException(KafkaError(KafkaError.GROUP_AUTHORIZATION_FAILED))).kind == AUTHORIZATION
    assert of_exception(KafkaException(KafkaError(KafkaError.REQUEST_TIMED_OUT))).kind == TIMEOUT
    assert of_exception(FetchError("bootstrap b:9", "timeout", "no answer within 12s")).kind == TIMEOUT
    assert of_exception(TimeoutError()).kind == TIMEOUT
    assert {REFUSED, TIMEOUT, TLS, SASL, UNKNOWN_HOST} == UNREACHABLE and AUTHORIZATION not in UNREACHABLE


def test_the_most_telling_of_several_brokers_failures_names_the_cause():
    timeout, sasl, refused = (classify(CAPTURED[i][1]) for i in (2, 7, 0))
    assert most_telling([timeout, refused]) is refused and most_telling([refused, sasl, timeout]) is sasl
    assert most_telling([]) is None


def test_the_advice_fits_the_kind():
    refused, timeout, unknown = advice(REFUSED), advice(TIMEOUT), advice(UNKNOWN_HOST)
    tls, sasl = advice(TLS), advice(SASL, principal="User:monitor", mechanism="SCRAM-SHA-512")
    acl = advice(AUTHORIZATION, principal="User:blind")
    for unreached in (refused, timeout, unknown, tls, sasl):  # nothing answered: no ACL can be the fix
        assert "ACL" not in unreached and "kafka-acls" not in unreached
    assert "listening" in refused and "listener" in refused
    assert "reachable" in timeout and "timeouts.admin" in timeout
    assert "resolve" in unknown and "DNS" in unknown
    assert all(k in tls for k in ("security.protocol", "ssl.ca.location", "certificate"))
    assert "User:monitor" in sasl and "SCRAM-SHA-512" in sasl and "sasl.mechanism" in sasl and "reference" in sasl
    assert "kafka-acls --add --allow-principal User:blind" in acl and "docs/security.md" in acl


def test_a_cluster_out_of_reach_is_one_sentence_naming_the_bootstrap_address_and_the_kind():
    exc = ClusterUnreachable("127.0.0.1:9,127.0.0.1:10", classify(CAPTURED[0][1]))
    assert str(exc).startswith("cannot reach the cluster at 127.0.0.1:9,127.0.0.1:10 (connection refused): "
                               "is a broker listening there")
    assert str(exc).endswith("(librdkafka: 127.0.0.1:41471/bootstrap: Connect to ipv4#127.0.0.1:41471 failed: "
                             "Connection refused)")
    assert exc.kind == REFUSED and exc.endpoint == "bootstrap 127.0.0.1:9,127.0.0.1:10" and "\n" not in str(exc)
    try:
        try:
            raise exc
        except ClusterUnreachable as inner:
            raise RuntimeError("wrapped") from inner
    except RuntimeError as outer:
        assert unreachable_cause(outer) is exc
    assert unreachable_cause(RuntimeError("no")) is None
    other = ClusterUnreachable("b:9", Failure(OTHER, "Failed to get metadata: Local: Broker transport failure"))
    assert "(Kafka error)" in str(other) and "Broker transport failure" in str(other)
