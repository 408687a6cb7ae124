"""librdkafka's lines through logging (collectors.admin.clientlog): a broker's connection failure at WARNING once
per (address, kind) and interval, naming the broker and the kind, then with the count left out;
librdkafka's notices and debug lines at DEBUG; other warnings once per kind of line. And a session's
record of each broker's last failure, from log lines and error callbacks alike. The lines are librdkafka's
own, captured from real runs (test_kafkaerrors.py says where); the clock is injected (a five-minute
interval is not waited for)."""

from __future__ import annotations

import logging

from confluent_kafka import KafkaError

from collectors.admin.errors import REFUSED, SASL
from collectors.admin.clientlog import ClientEvents, LibrdkafkaLog

REFUSED_LINE = ("[thrd:127.0.0.1:{port}/bootstrap]: 127.0.0.1:{port}/bootstrap: Connect to ipv4#127.0.0.1:{port} "
                "failed: Connection refused (after {ms}ms in state CONNECT)")
SASL_TEXT = ("sasl_ssl://127.0.0.1:34651/bootstrap: SASL authentication error: Authentication failed during "
             "authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512 (after 326ms in state "
             "AUTH_REQ)")


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def fail(lib, line: str, level: int = logging.ERROR) -> None:
    lib.log(level, "%s [%s] %s", "FAIL", "rdkafka#producer-1", line)  # as confluent-kafka's log_cb calls it


def test_each_brokers_connection_failure_is_logged_once_per_interval_naming_it_and_the_kind(caplog):
    clock = Clock()
    lib = LibrdkafkaLog(logging.getLogger("test.librdkafka"), clock=clock, connect_repeat=300)
    with caplog.at_level(logging.DEBUG, logger="test.librdkafka"):
        for i in range(1000):  # ~100 connects in 10 s per address, as a dead port makes librdkafka retry
            clock.now = i * 0.1
            fail(lib, REFUSED_LINE.format(port=9, ms=i % 3))
            fail(lib, REFUSED_LINE.format(port=10, ms=i % 3))  # another broker of the cluster: its own line
        clock.now = 301
        fail(lib, REFUSED_LINE.format(port=9, ms=0))
    lines = [(r.levelno, r.getMessage()) for r in caplog.records]
    assert len(lines) == 3, lines
    assert lines[0] == (logging.WARNING, "librdkafka: broker 127.0.0.1:9: connection refused (127.0.0.1:9/bootstrap: "
                                         "Connect to ipv4#127.0.0.1:9 failed: Connection refused)")
    assert lines[1][1].startswith("librdkafka: broker 127.0.0.1:10: connection refused")
    assert lines[2][1].endswith("(999 more like it in the last 300s not logged)"), lines[2]


def test_librdkafkas_notices_go_to_debug_and_other_warnings_once_per_kind_of_line(caplog):
    clock = Clock()
    lib = LibrdkafkaLog(logging.getLogger("test.librdkafka"), repeat=60, clock=clock)
    timed_out = ("[thrd:127.0.0.1:57139/bootstrap]: 127.0.0.1:57139/bootstrap: Timed out {} in-flight, 0 "
                 "retry-queued, 0 out-queue, 0 partially-sent requests")
    idle = "[thrd:ssl://127.0.0.1:34651/1]: ssl://127.0.0.1:34651/1: Disconnected (after 600000ms in state UP)"
    with caplog.at_level(logging.DEBUG, logger="test.librdkafka"):
        lib.log(logging.INFO, "%s [%s] %s", "REQTMOUT", "rdkafka#producer-3", timed_out.format(1))
        fail(lib, idle, logging.INFO)  # an idle connection closed: no failure
        for n in range(50):
            lib.log(logging.WARNING, "%s [%s] %s", "REQTMOUT", "rdkafka#producer-3", timed_out.format(n))
    lines = [(r.levelno, r.getMessage()) for r in caplog.records]
    assert [lv for lv, _ in lines] == [logging.DEBUG, logging.DEBUG, logging.WARNING], lines


def test_a_sessions_clients_record_each_brokers_last_failure_from_log_lines_and_errors():
    shared = LibrdkafkaLog(logging.getLogger("test.librdkafka.session"))
    events = ClientEvents(shared)
    events.log(logging.ERROR, "%s [%s] %s", "FAIL", "rdkafka#producer-1", REFUSED_LINE.format(port=9, ms=0))
    events.error(KafkaError(KafkaError._AUTHENTICATION, SASL_TEXT))
    events.error(KafkaError(KafkaError._ALL_BROKERS_DOWN, "3/3 brokers are down"))  # names no broker
    assert {a: f.kind for a, f in events.failures.items()} == {"127.0.0.1:9": REFUSED, "127.0.0.1:34651": SASL}
    assert [f.kind for f in events.of({"127.0.0.1:9"})] == [REFUSED]
    events.reset()
    assert events.of() == []
