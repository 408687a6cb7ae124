"""The facts a cause is judged from, and the segment file name every part of a verdict shares.

``explain`` (``monitor.verdicts.causes``) gathers what the edges read into one ``Facts``; the finders
(``monitor.verdicts.finders``), the forecasts (``monitor.verdicts.forecasts``) and the edges that build the inputs
(``BrokerFacts``, ``WriteRate``) all need these types, so they live below all of them, apart from the precedence
table, and none of those modules imports another just to reach a type.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from monitor.kafka.cleanerlog import CleanerLogState
from monitor.model.cleanerio import IoRate
from monitor.model.compaction import PartitionState
from monitor.model.configdeps import configs_of
from monitor.model.topicconfig import UNKNOWN, AdminRefusal, BrokerSetting, TopicConfig

# the topic configs the causes' verdicts and forecasts are made from (monitor.model.configdeps: eligibility,
# tombstones past retention, the active segment's roll)
VERDICT_CONFIGS = configs_of("eligible", "tombstones_past_retention", "active_segment_roll")


@dataclass(frozen=True)
class BrokerFacts:
    """What the broker's own gauges say (JMX exporter / Jolokia), and its cleaner settings (admin API)."""

    dead_threads: float | None = None  # DeadThreadCount; None when the gauge was not read
    source: str = ""  # where it was read
    cleaner_enabled: bool | None = None  # log.cleaner.enable; None when not known
    cleaner_threads: int | None = None  # log.cleaner.threads; None when not known
    # the cleaner's read plus write rate over the collector's last refresh window (monitor.model.cleanerio),
    # and log.cleaner.io.max.bytes.per.second with where it came from; None when not known
    cleaner_io: IoRate | None = None
    io_max: BrokerSetting | None = None
    backoff: BrokerSetting | None = None  # log.cleaner.backoff.ms (the cleaner queue's forecast)
    broker: str | None = None  # its node.id, as the admin API names it
    # the cleaner settings set on this broker alone (BrokerSetting.per_broker): a fix changes them with
    # --entity-name <broker>, which the cluster-wide --entity-default would not override
    per_broker: frozenset[str] = frozenset()

    def entity(self, key: str) -> str | None:
        """The broker a fix of ``key`` must name (``fixes.alter_brokers``), None for the cluster's default."""
        return self.broker if key in self.per_broker else None


@dataclass(frozen=True)
class WriteRate:
    """Bytes appended to the partition per second, and how that was found (or why it is unknown)."""

    bytes_per_second: float | None
    basis: str


@dataclass(frozen=True)
class Facts:
    state: PartitionState
    config: TopicConfig
    sources: Mapping[str, str]
    cleaner: CleanerLogState | None
    broker: BrokerFacts | None
    eligible_seconds: float | None
    rate: WriteRate
    now_ms: int
    faults: tuple[str, ...]
    bootstrap: str
    txn_timeout: BrokerSetting | None
    refusal: AdminRefusal | None = None  # why the topic's config is unknown, when it is

    def cfg(self, *keys: str) -> dict:
        """The configs named, each with its source; a value the admin API did not give (source unknown) is
        None, never the placeholder the state was computed with."""
        values = self.config.to_strings()
        return {k: {"value": None if self.sources.get(k) == UNKNOWN else values[k],
                    "source": self.sources.get(k, "unknown")} for k in keys}

    @property
    def unknown_configs(self) -> tuple[str, ...]:
        """The compaction configs the verdicts are made from that are unknown (the admin API refused)."""
        return unknown_configs(self.sources)

    def txn_timeout_cfg(self) -> dict:
        """The broker's transaction.max.timeout.ms the state's hanging count was made with, and where it
        came from (admin | config | default; "unknown" when the caller did not say)."""
        used, given = self.state.transaction_max_timeout_ms, self.txn_timeout
        source = given.source if given is not None and given.value == used else "unknown"
        return {"transaction.max.timeout.ms": {"value": str(used), "source": source}}


Found = tuple[str, dict, tuple[str, ...]]  # summary, evidence beyond the common, fix


def segment_file(base_offset: int) -> str:
    """Kafka's segment file name for a base offset (LogFileUtils.filenamePrefixFromOffset)."""
    return f"{base_offset:020d}.log"



def unknown_configs(sources: dict) -> tuple[str, ...]:
    """The compaction configs the verdicts are made from whose source is unknown (``Facts.unknown_configs``)."""
    return tuple(k for k in VERDICT_CONFIGS if sources.get(k) == UNKNOWN)
