"""librdkafka's own log lines and error callbacks into Python's logging, rate-limited, and each broker's
latest connection failure kept for the session that asked (``ClientEvents``), so that a failed call can
name the broker and the kind (``collectors.admin.errors``).

Every confluent-kafka client the project makes gets ``logger=`` one of these (confluent-kafka's
``logger`` setting: librdkafka writes its lines to a queue served by the client's ``poll()``, the
AdminClient's too: Admin.c ``rd_kafka_set_log_queue``), so nothing of librdkafka's goes to stderr
directly. Why the limits: a broker down makes every client retry its connection with backoff, each retry
a log line and an error callback (~100 each in 10 s for one address, the issue's "205 lines").

* a connection failure (refused, timeout, TLS, SASL, a host that does not resolve): WARNING, once per
  (broker address, kind) per ``CONNECT_REPEAT_SECONDS``, naming the broker and the kind; the next one
  after that says how many were left out;
* librdkafka's notices and debug lines: DEBUG (its own verbosity is not the user's);
* any other warning or error: its level, each kind of line (facility and text, numbers aside) once per
  ``LIBRDKAFKA_REPEAT_SECONDS``.
"""

from __future__ import annotations

import logging
import re
import threading
import time

from collectors.admin.errors import UNREACHABLE, WORDS, Failure, of_error, of_log_line

LOGGER = "compaction_monitor.librdkafka"
CONNECT_REPEAT_SECONDS = 300.0  # a broker's connection failure of one kind: at most once per this
LIBRDKAFKA_REPEAT_SECONDS = 60.0  # any other kind of warning or error line: at most once per this
LIBRDKAFKA_MAX_KINDS = 1000  # kinds of line remembered (the table is cleared past it: bounded memory)


class LibrdkafkaLog:
    """confluent-kafka's ``logger``: it calls ``log(level, "%s [%s] %s", facility, client name, message)``.
    Thread-safe: the fetchers' threads share one (``LIBRDKAFKA_LOG``), so a line several clients repeat
    goes out once."""

    _NUMBERS = re.compile(r"\d+")

    def __init__(self, logger: logging.Logger | None = None, repeat: float = LIBRDKAFKA_REPEAT_SECONDS,
                 clock=time.monotonic, connect_repeat: float = CONNECT_REPEAT_SECONDS):
        self.logger = logger or logging.getLogger(LOGGER)
        self.repeat, self.connect_repeat, self.clock = repeat, connect_repeat, clock
        self._seen: dict[tuple, list] = {}  # kind -> [last logged at, left out since]
        self._lock = threading.Lock()

    def log(self, level: int, fmt: str, *args) -> None:
        failure = of_log_line(args)
        if failure is not None and failure.kind in UNREACHABLE:
            self._once(("connect", failure.address, failure.kind), self.connect_repeat, logging.WARNING,
                       "librdkafka: broker %s: %s (%s)", failure.address, WORDS[failure.kind], failure)
            return
        if level < logging.WARNING:
            self.logger.debug("librdkafka: " + fmt, *args)
            return
        facility, message = (args[0], args[-1]) if len(args) >= 2 else ("", fmt % args if args else fmt)
        self._once((level, facility, self._NUMBERS.sub("N", str(message))), self.repeat, level,
                   "librdkafka: " + fmt, *args)

    def _once(self, key: tuple, every: float, level: int, fmt: str, *args) -> None:
        now = self.clock()
        with self._lock:
            seen = self._seen.get(key)
            if seen is not None and now - seen[0] < every:
                seen[1] += 1
                return
            if len(self._seen) >= LIBRDKAFKA_MAX_KINDS:
                self._seen.clear()
            left_out = seen[1] if seen is not None else 0
            self._seen[key] = [now, 0]
        more = f" ({left_out} more like it in the last {every:g}s not logged)" if left_out else ""
        self.logger.log(level, fmt + "%s", *args, more)


LIBRDKAFKA_LOG = LibrdkafkaLog()  # one for every client: a line repeated by several clients goes out once


class ClientEvents:
    """One session's clients' ``logger`` and ``error_cb``: every line goes on to the shared
    ``LibrdkafkaLog``; each broker's latest connection failure (from either) is kept in ``failures``
    (address -> ``Failure``) until ``reset()``, for the session to say why a call failed."""

    def __init__(self, shared: LibrdkafkaLog = LIBRDKAFKA_LOG):
        self.shared = shared
        self.failures: dict[str, Failure] = {}
        self._lock = threading.Lock()

    def log(self, level: int, fmt: str, *args) -> None:
        self._note(of_log_line(args))
        self.shared.log(level, fmt, *args)

    def error(self, err) -> None:
        """confluent-kafka's ``error_cb`` (a KafkaError): librdkafka's error events are its log lines
        again (a failed connect, an SASL refusal), kept, not logged twice."""
        self._note(of_error(err))

    def _note(self, failure: Failure | None) -> None:
        if failure is not None and failure.address is not None and failure.kind in UNREACHABLE:
            with self._lock:
                self.failures[failure.address] = failure

    def reset(self) -> None:
        with self._lock:
            self.failures.clear()

    def of(self, addresses=None) -> list[Failure]:
        """The failures kept for ``addresses`` (all when None)."""
        with self._lock:
            return [f for a, f in self.failures.items() if addresses is None or a in addresses]
