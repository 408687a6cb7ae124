"""Shared fixtures: one real Kafka broker for the whole session, record segments made at test time
(tests/recordfixtures.py), and the optional shared record corpus.

The broker runs on loopback ports the kernel hands out, under pytest's temp
dir, so two runs on one machine never collide; it is stopped at the end of
the session (and at interpreter exit if pytest dies on the way).
"""

from __future__ import annotations

import atexit
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

ARTIFACTS = ROOT / "test-artifacts"


@pytest.fixture(scope="session")
def corpus() -> Path:
    """Other projects' record bytes in ../shared (never part of this repository): an optional extra
    check, skipped with its reason where the folder is absent, as in a plain clone."""
    from recordfixtures import SHARED_CORPUS, SHARED_CORPUS_ABSENT

    if not SHARED_CORPUS.is_dir():
        pytest.skip(SHARED_CORPUS_ABSENT)
    return SHARED_CORPUS


@pytest.fixture(scope="session")
def record_gallery(tmp_path_factory):
    """One segment per magic, codec and odd layout, made by kafka-python's record builders: name -> Segment."""
    from recordfixtures import gallery

    return gallery(tmp_path_factory.mktemp("record-gallery"))


@pytest.fixture(scope="session")
def kafka(tmp_path_factory):
    """A running single-node KRaft broker (``BrokerState``): bootstrap, jmx_url, log_dir, logs."""
    from localkafka import broker

    directory = tmp_path_factory.mktemp("kafka")
    state = broker.start(directory, progress=lambda m: print(f"[kafka] {m}", file=sys.stderr))
    atexit.register(broker.stop, directory, progress=lambda *_: None)
    yield state
    broker.stop(directory, progress=lambda *_: None)
    # keep server.log / log-cleaner.log for inspection after a failed run
    ARTIFACTS.mkdir(exist_ok=True)
    for log in (state.server_log, state.cleaner_log):
        if log.exists():
            (ARTIFACTS / log.name).write_bytes(log.read_bytes())


@pytest.fixture(scope="session")
def kafka_admin(kafka):
    from confluent_kafka.admin import AdminClient

    return AdminClient({"bootstrap.servers": kafka.bootstrap})


@pytest.fixture(scope="session")
def spark():
    """One local Spark session (2 cores) for all tests that need Spark, with Spark's Kafka source
    resolved from Maven Central; stopped at the end of the session."""
    from spark_analysis.job import session

    s = session("local[2]", app="compaction-monitor-tests", kafka_source=True)
    yield s
    s.stop()
