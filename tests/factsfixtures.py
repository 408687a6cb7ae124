"""A broker's log dir, admin snapshot and JMX page for the facts and exporter-area tests: the log dir
written with kafka-python's record builders (tests/recordfixtures.py), the JMX page recorded from a real
Kafka 4.3 broker (tests/collectors/pages), the admin snapshot the admin source's own types filled as it
fills them (its reading of a broker is tests/collectors/admin/test_admin_kafka.py)."""

from __future__ import annotations

import gzip
from pathlib import Path

from collectors.admin.state import AdminSnapshot, GroupLag, GroupSnapshot, PartitionOffsets, TopicInfo
from collectors.jmx.gauges import parse_exposition
from collectors.logdirs.scanner import LogDirScanner
from collectors.serving.runner import Store
from monitor.settings.config import ClusterConfig
from monitor.model.topicconfig import BrokerSetting, TopicConfig
from recordfixtures import items, v2, write

PAGE = Path(__file__).parent / "collectors" / "pages" / "jmx-exporter.kafka-4.3.0.prom.gz"
IO_MAX = "log.cleaner.io.max.bytes.per.second"


def log_dir(root: Path, node: str = "1") -> Path:
    """orders-0: two segments, never cleaned (eligible); orders-1: a segment swap in progress (a clean's
    last step), so its state cannot be computed this refresh; orders-2: cleaned up to its active segment."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "meta.properties").write_text(f"version=1\nnode.id={node}\ncluster.id=facts\n")
    write(root / "orders-0" / f"{0:020d}.log", [v2(items(range(0, 30), "o", distinct=10))])
    write(root / "orders-0" / f"{30:020d}.log", [v2(items(range(30, 40), "o", distinct=10))])
    write(root / "orders-1" / f"{0:020d}.log", [v2(items(range(0, 6), "x"))])
    (root / "orders-1" / f"{0:020d}.index.swap").write_bytes(b"\0" * 16)
    write(root / "orders-2" / f"{0:020d}.log", [v2(items(range(0, 30), "o", distinct=30))])
    write(root / "orders-2" / f"{30:020d}.log", [v2(items(range(30, 40), "o", distinct=10))])
    (root / "cleaner-offset-checkpoint").write_text("0\n3\norders 0 0\norders 1 0\norders 2 30\n")
    return root


def gauges():
    """The recorded JMX exporter page as the jmx source reads it."""
    return parse_exposition(gzip.decompress(PAGE.read_bytes()).decode(), ClusterConfig(), str(PAGE))


def admin(leader: int = 1, stable: int = 40, latest: int = 40) -> AdminSnapshot:
    """Topic orders (three partitions led by ``leader``), broker 1's cleaner settings, one of them refused."""
    parts = {p: PartitionOffsets(leader, 0, latest, stable, (1, 2)) for p in (0, 1, 2)}
    settings = {"1": {"log.cleaner.enable": BrokerSetting("log.cleaner.enable", True, "admin"),
                      "log.cleaner.threads": BrokerSetting("log.cleaner.threads", 2, "admin"),
                      IO_MAX: BrokerSetting(IO_MAX, 1048576.0, "admin"),
                      "log.cleaner.backoff.ms": BrokerSetting("log.cleaner.backoff.ms", None, "unknown",
                                                              "CLUSTER_AUTHORIZATION_FAILED")}}
    return AdminSnapshot(100.0, {"orders": TopicInfo("orders", TopicConfig(cleanup_policy=("compact",)), parts)}, cleaner_settings=settings,
                         listed=frozenset({"orders"}))


def lag(partition: int = 0, committed: int = 5, lag_seconds: float | None = 60.0) -> GroupLag:
    return GroupLag("g1", "orders", partition, committed, 40, 40 - committed, lag_seconds, 86400.0,
                    min_compaction_lag_seconds=0.0, lag_method="exact" if lag_seconds is not None else None,
                    lag_unknown_reason=None if lag_seconds is not None else "no_timestamp")


def store(tmp_path: Path, *, brokers=("1",), with_gauges: bool = True, with_admin: bool = True,
          groups: tuple = (), leader: int = 1) -> Store:
    """Cluster c: each broker's log dir (its own copy of orders), broker 1's JMX page, the admin source."""
    s = Store()
    if with_admin:
        s.register("admin:c", "admin", "c")
        s.success("admin:c", admin(leader), 0.0, 100.0)
    if groups:
        s.register("consumer_groups:c", "consumer_groups", "c")
        s.success("consumer_groups:c", GroupSnapshot(100.0, lags=tuple(groups), listed=frozenset({"g1"})), 0.0, 100.0)
    for b in brokers:
        name = f"log_dirs:c:{b}"
        s.register(name, "log_dirs", "c", b)
        s.success(name, LogDirScanner([log_dir(tmp_path / f"b{b}", b)], broker_id=b).refresh(), 0.0, 100.0)
    if with_gauges:
        s.register("jmx:c:1", "jmx", "c", "1")
        s.success("jmx:c:1", gauges(), 0.0, 100.0)
    return s
