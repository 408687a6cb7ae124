"""Topic configs that govern compaction: Kafka's defaults (LogConfig / CleanerConfig), and the one
precedence between the places a topic's config can come from (``effective_config``); the same
precedence for the broker settings the model reads (``effective_broker_setting``:
``transaction.max.timeout.ms`` and the log cleaner's own settings, ``CLEANER_SETTINGS``).

Values arrive as strings (describe_configs, a YAML file, CLI flags); ``TopicConfig.from_strings``
turns them into numbers with a clear error naming the config key.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, fields
from typing import Mapping

from monitor.kafka.kafkanames import LONG_MAX  # a Java long: re-exported, defined once there
from monitor.model.transactions import DEFAULT_TRANSACTION_MAX_TIMEOUT_MS, TRANSACTION_MAX_TIMEOUT

# Kafka defaults (LogConfig.java, CleanerConfig.java)
DEFAULTS = {
    "cleanup.policy": "delete",
    "min.cleanable.dirty.ratio": 0.5,
    "min.compaction.lag.ms": 0,
    "max.compaction.lag.ms": LONG_MAX,
    "delete.retention.ms": 86_400_000,
    "segment.bytes": 1_073_741_824,
    "segment.ms": 604_800_000,
    "file.delete.delay.ms": 60_000,  # how long a replaced or expired segment stays as .deleted
    # the delete half of cleanup.policy=compact,delete (monitor.model.retention); -1: no limit
    "retention.ms": 604_800_000,
    "retention.bytes": -1,
    # Kafka 4.4 (LogConfig / ServerConfigs, broker property of the same name): the largest decompressed record
    # the broker accepts, checked where it decompresses a batch, the cleaner included; absent before 4.4
    "max.decompressed.message.bytes": 2_147_483_639,
}
# how an empty cleanup.policy (Kafka 4.2+, KIP-1161: "cleanup.policy=" set to nothing) reads
EMPTY_POLICY_TEXT = "(empty: neither compacted nor deleted, infinite retention; KIP-1161, Kafka 4.2+)"
# max.decompressed.message.bytes' default (Integer.MAX_VALUE - 8, its range's top): "no limit beyond the largest
# record the broker could allocate anyway" (Kafka's doc): below it, a per-record cap is set (``TopicConfig.decompressed_cap``)
NO_DECOMPRESSED_CAP = DEFAULTS["max.decompressed.message.bytes"]
UNLIMITED_IF_NEGATIVE = frozenset({"retention.ms", "retention.bytes"})  # Kafka takes any value < 0 as "no limit"
# Kafka's internal topics that the broker creates with cleanup.policy=compact
INTERNAL_COMPACTED = frozenset({"__consumer_offsets", "__transaction_state", "__share_group_state"})
# KRaft's metadata log: kept by snapshots, never by the log cleaner
NOT_CLEANED_BY_LOG_CLEANER = frozenset({"__cluster_metadata"})

# the broker's log cleaner settings (CleanerConfig.java, Kafka 4.3: names and defaults); all but
# log.cleaner.enable are dynamic (LogCleaner.RECONFIGURABLE_CONFIGS): kafka-configs --alter
# --entity-type brokers changes them without a restart. log.cleaner.enable is deprecated (to go in
# Kafka 5.0) but still read: false means no cleaner at all on the broker.
CLEANER_SETTINGS = ("log.cleaner.enable", "log.cleaner.threads", "log.cleaner.dedupe.buffer.size",
                    "log.cleaner.io.buffer.load.factor", "log.cleaner.io.max.bytes.per.second",
                    "log.cleaner.backoff.ms")
# CleanerConfig.LOG_CLEANER_IO_MAX_BYTES_PER_SECOND, Kafka's default: Double.MAX_VALUE. Kafka has no "off"
# for the cleaner's throttle: Throttler.maybeThrottle sleeps only while the observed rate exceeds the
# setting, which no cleaner does at Double.MAX_VALUE (nor at +Inf, which Double.parseDouble takes). So a
# setting at or above it is no throttle (``no_throttle``), and the dashboards draw no line for it.
NO_THROTTLE = sys.float_info.max  # Double.MAX_VALUE, 1.7976931348623157e308


def no_throttle(limit: float) -> bool:
    """Whether log.cleaner.io.max.bytes.per.second ``limit`` leaves the cleaner unthrottled (Kafka's
    default); the one test of it, for the model, the estimate and (as PromQL) the dashboards."""
    return limit >= NO_THROTTLE


BROKER_DEFAULTS = {  # broker-only settings
    "log.cleaner.enable": True,
    "log.cleaner.threads": 1,
    "log.cleaner.dedupe.buffer.size": 134_217_728,
    "log.cleaner.io.buffer.load.factor": 0.9,
    "log.cleaner.io.max.bytes.per.second": NO_THROTTLE,
    "log.cleaner.backoff.ms": 15_000,
    # TransactionStateManagerConfig: the longest transaction.timeout.ms a producer may ask for
    TRANSACTION_MAX_TIMEOUT: DEFAULT_TRANSACTION_MAX_TIMEOUT_MS,
}
# broker settings the per-partition model reads, with ``effective_broker_setting``'s precedence
MODEL_BROKER_SETTINGS = (TRANSACTION_MAX_TIMEOUT,) + CLEANER_SETTINGS
_FLOAT_SETTINGS = ("log.cleaner.io.buffer.load.factor", "log.cleaner.io.max.bytes.per.second")


class ConfigValueError(ValueError):
    def __init__(self, key: str, value, reason: str):
        self.key = key
        super().__init__(f"{key}={value!r}: {reason}")


@dataclass(frozen=True)
class TopicConfig:
    cleanup_policy: tuple[str, ...] = ("delete",)
    min_cleanable_dirty_ratio: float = 0.5
    min_compaction_lag_ms: int = 0
    max_compaction_lag_ms: int = LONG_MAX
    delete_retention_ms: int = 86_400_000
    segment_bytes: int = 1_073_741_824
    segment_ms: int = 604_800_000
    file_delete_delay_ms: int = 60_000
    retention_ms: int = 604_800_000  # applies with cleanup.policy=compact,delete only; -1: unlimited
    retention_bytes: int = -1
    max_decompressed_message_bytes: int = NO_DECOMPRESSED_CAP

    @property
    def deletes(self) -> bool:
        """The delete half of the policy (``compact,delete``): retention removes whole segments."""
        return "delete" in self.cleanup_policy

    @property
    def compacted(self) -> bool:
        return "compact" in self.cleanup_policy

    @property
    def policy_text(self) -> str:
        """cleanup.policy as a person reads it. Empty (Kafka 4.2+, KIP-1161) is neither compacted nor deleted:
        infinite retention, said so, never shown as a blank or taken for Kafka's default (delete)."""
        return ",".join(self.cleanup_policy) if self.cleanup_policy else EMPTY_POLICY_TEXT

    @property
    def decompressed_cap(self) -> int | None:
        """max.decompressed.message.bytes when set below Kafka's default (a per-record cap, which can make the
        cleaner fail on records already stored); None at the default, which no stored record can exceed."""
        v = self.max_decompressed_message_bytes
        return v if v < NO_DECOMPRESSED_CAP else None

    @classmethod
    def from_strings(cls, values: dict[str, object] | None) -> "TopicConfig":
        """Kafka config names (``min.cleanable.dirty.ratio``...) to a TopicConfig; unknown keys ignored."""
        values = dict(values or {})
        kw: dict[str, object] = {}
        for f in fields(cls):
            key = f.name.replace("_", ".")
            if key not in values or values[key] is None:
                continue
            raw = values[key]
            if f.name == "cleanup_policy":
                items = raw if isinstance(raw, (list, tuple)) else str(raw).split(",")
                kw[f.name] = tuple(p.strip().lower() for p in items if p.strip())
                continue
            try:
                num = float(raw) if f.name == "min_cleanable_dirty_ratio" else int(str(raw).strip())
            except (TypeError, ValueError):  # a list or a mapping where a number belongs, too
                raise ConfigValueError(key, raw, "not a number") from None
            if f.name == "min_cleanable_dirty_ratio" and not 0 <= num <= 1:
                raise ConfigValueError(key, raw, "must be between 0 and 1")
            if f.name != "min_cleanable_dirty_ratio" and num < 0 and key not in UNLIMITED_IF_NEGATIVE:
                raise ConfigValueError(key, raw, "must not be negative")
            kw[f.name] = num
        return cls(**kw)

    def to_strings(self) -> dict[str, str]:
        out = {}
        for f in fields(self):
            v = getattr(self, f.name)
            out[f.name.replace("_", ".")] = ",".join(v) if isinstance(v, tuple) else str(v)
        return out


# where a topic config value came from, highest precedence first; UNKNOWN: a broker setting the admin
# API was asked for and refused (ACLs, a timeout), with no config-file value either
COMMAND_LINE, ADMIN, CONFIG_FILE, DEFAULT, UNKNOWN = "command-line", "admin", "config", "default", "unknown"


# why a topic's config is unknown (the reason label of topic_config_source_info; the text says more)
NOT_LISTED, REFUSED, ADMIN_DOWN = "not_listed", "describe_configs_refused", "admin_unavailable"


@dataclass(frozen=True)
class AdminRefusal:
    """Why the admin API, asked for a topic's config, did not give it: ``code`` one of NOT_LISTED,
    REFUSED, ADMIN_DOWN (a metric label), ``text`` the whole reason (the log, ``explain``)."""

    code: str
    text: str


def admin_refusal(snap, topic: str, down: str | None = None) -> AdminRefusal | None:
    """Why the admin API's answer does not give ``topic``'s config; None when it does (the topic is
    listed and described). ``snap``: the answer (``collectors.admin.state.AdminSnapshot``: ``topics``,
    ``not_compacted``, ``refused``, ``principal``), None when there is none (``down``: why, if known).
    The one rule for the collector and the audit: the admin API configured and not telling makes a
    topic's config unknown (``effective_config``'s ``refusal``)."""
    if snap is None:
        return AdminRefusal(ADMIN_DOWN, f"the admin API did not answer: {down}" if down else
                            "the admin source has no topic configs (down, or not refreshed yet)")
    if topic in snap.topics or topic in snap.not_compacted:
        return None
    if topic in snap.refused:
        return AdminRefusal(REFUSED, snap.refused[topic])
    return AdminRefusal(NOT_LISTED, f"the admin API does not list {topic} for {snap.principal or 'the client'}: "
                                    f"no Describe on TOPIC {topic} (or the topic was deleted)")


@dataclass(frozen=True)
class EffectiveConfig:
    """A topic's config, and where each of its values came from (Kafka config name -> source). A value
    whose source is ``unknown`` is a placeholder (Kafka's default, so that the state can be computed at
    all), never to be shown or judged by as the topic's: ``known`` says which values may be."""

    config: TopicConfig
    sources: Mapping[str, str]
    refusal: AdminRefusal | None = None  # why values are unknown (the admin API asked, and did not tell)

    @property
    def source(self) -> str:
        """The topic's config source: the highest-precedence place any value came from; ``unknown`` when
        none is known (``refusal`` says why some are unknown)."""
        return next((s for s in (COMMAND_LINE, ADMIN, CONFIG_FILE, DEFAULT) if s in self.sources.values()), UNKNOWN)

    def known(self, *keys: str) -> bool:
        """Whether every one of ``keys`` (Kafka config names) is the topic's own, from a stated source."""
        return all(self.sources.get(k) != UNKNOWN for k in keys)

    @property
    def unknown_keys(self) -> tuple[str, ...]:
        return tuple(k for k, v in self.sources.items() if v == UNKNOWN)


def effective_config(topic: str, *, admin: TopicConfig | None = None, file: Mapping[str, object] | None = None,
                     command_line: Mapping[str, object] | None = None, compacted: bool = False,
                     refusal: AdminRefusal | None = None) -> EffectiveConfig:
    """The one precedence of topic configs, for every command and edge.

    * ``admin``: the broker's effective config (the admin API's describe_configs), when known, is the
      topic's config as a whole: it already folds the broker's own defaults and overrides;
    * else ``file``: the topic's entry in the config file (``clusters[].topics``), over Kafka's defaults;
    * else, when the admin API was asked and did not tell (``refusal``: no Describe or DescribeConfigs
      ACL, the admin source down), **unknown**: each value not in the file or on the command line has
      the source ``unknown`` (a placeholder value the caller must not show or judge by);
    * else (nobody was asked) Kafka's defaults. Kafka's default ``cleanup.policy`` is ``delete``; a topic is taken as
      compacted instead when it is named in the config file or on the command line (those name
      compacted topics), when it is one of Kafka's internal compacted topics, or when the caller has
      other evidence (``compacted``: a cleaner checkpoint, a segments audit);
    * then ``command_line`` (``--topic-config``) overrides, value by value, whatever came before.

    String values are checked as ``TopicConfig.from_strings`` does (``ConfigValueError`` names the key).
    """
    if admin is not None:
        values = admin.to_strings()
        sources = dict.fromkeys(values, ADMIN)
    else:
        values = TopicConfig().to_strings()
        sources = dict.fromkeys(values, DEFAULT)
        if file is not None or command_line is not None or compacted or topic in INTERNAL_COMPACTED:
            values["cleanup.policy"] = "compact"
            sources["cleanup.policy"] = (CONFIG_FILE if file is not None else
                                         COMMAND_LINE if command_line is not None else DEFAULT)
        if refusal is not None:  # asked and not told: unknown, whatever Kafka's default is
            sources = dict.fromkeys(values, UNKNOWN)
        for key, value in (file or {}).items():
            if key in values:
                values[key], sources[key] = value, CONFIG_FILE
    for key, value in (command_line or {}).items():
        if key in values:
            values[key], sources[key] = value, COMMAND_LINE
    why = refusal if admin is None and UNKNOWN in sources.values() else None
    if admin is not None and not command_line:
        return EffectiveConfig(admin, sources)
    return EffectiveConfig(TopicConfig.from_strings(values), sources, why)


def effective_configs(admin: Mapping[str, TopicConfig] | None = None,
                      file: Mapping[str, Mapping[str, object]] | None = None) -> dict[str, TopicConfig]:
    """``effective_config`` of every topic the admin API or the config file knows (the spark-submit job
    checks the config file's values with it; the audit itself resolves each topic it finds with
    ``effective_config`` and ``admin_refusal``, ``spark_analysis.audit.AuditInputs.effective``)."""
    admin, file = admin or {}, file or {}
    return {t: effective_config(t, admin=admin.get(t), file=file.get(t)).config for t in {*admin, *file}}



@dataclass(frozen=True)
class BrokerSetting:
    """One broker setting the model uses, and where its value came from (admin | config | default |
    unknown). ``unknown``: the broker was asked and did not tell (``reason`` says why); the value is
    then None, never Kafka's default passed off as the broker's. ``default`` means nobody was asked
    (no bootstrap server): Kafka's default, stated as such."""

    key: str
    value: int | float | bool | None
    source: str
    reason: str | None = None
    # for a value the admin API gave: Kafka's ConfigSource name (DYNAMIC_BROKER_CONFIG, ...), which says how a
    # change reaches the broker (``per_broker``); None when not known
    kafka_source: str | None = None

    @property
    def per_broker(self) -> bool:
        """Set on this broker alone (``kafka-configs --entity-name <id>``): a dynamic per-broker value comes
        before the cluster-wide default (DynamicBrokerConfig's precedence), so ``--entity-default`` would not
        change it."""
        return self.kafka_source == PER_BROKER_SOURCE

    @property
    def known(self) -> bool:
        return self.value is not None


def parse_broker_value(key: str, raw) -> int | float | bool:
    """A broker setting's string (describe_configs, YAML) as the model's type; ``ConfigValueError`` names
    the key."""
    if key not in MODEL_BROKER_SETTINGS:
        raise KeyError(f"{key}: not a broker setting the model reads ({', '.join(MODEL_BROKER_SETTINGS)})")
    if isinstance(BROKER_DEFAULTS[key], bool):
        text = str(raw).strip().lower()
        if text not in ("true", "false"):
            raise ConfigValueError(key, raw, "not true or false")
        return text == "true"
    try:
        value = float(str(raw).strip()) if key in _FLOAT_SETTINGS else int(str(raw).strip())
    except ValueError:
        raise ConfigValueError(key, raw, "not a number") from None
    if value < 0 or (key == "log.cleaner.threads" and value < 1):
        raise ConfigValueError(key, raw, "out of range")
    return value


PER_BROKER_SOURCE = "DYNAMIC_BROKER_CONFIG"  # Kafka's ConfigSource of a value set with --entity-name <broker id>


def effective_broker_setting(key: str, *, admin=None, file=None, admin_error: str | None = None,
                             kafka_source: str | None = None) -> BrokerSetting:
    """The one precedence of a broker setting the model reads, as ``effective_config``'s for topics:
    the broker's own value from the admin API (describe_configs on the BROKER resource: what it has in
    force, its default included) when known, else the config file's (``clusters[].<key with _>``, or
    ``clusters[].cleaner`` for the cleaner's), else: ``unknown`` with the reason when the admin API was
    asked and did not answer (``admin_error``), Kafka's default (``BROKER_DEFAULTS``) when it was not
    asked at all."""
    if admin is not None:
        return BrokerSetting(key, parse_broker_value(key, admin), ADMIN, kafka_source=kafka_source)
    if file is not None:
        return BrokerSetting(key, parse_broker_value(key, file), CONFIG_FILE)
    if admin_error is not None:
        return BrokerSetting(key, None, UNKNOWN, admin_error)
    return BrokerSetting(key, parse_broker_value(key, BROKER_DEFAULTS[key]), DEFAULT)


def broker_cleaner_settings(*, admin: Mapping[str, object] | None = None, file: Mapping[str, object] | None = None,
                            admin_error: str | None = None,
                            kafka_sources: Mapping[str, str] | None = None) -> dict[str, BrokerSetting]:
    """A broker's ``CLEANER_SETTINGS`` by ``effective_broker_setting``: ``admin`` the broker's
    describe_configs values (None: not asked, or refused with ``admin_error``) and ``kafka_sources`` their
    ConfigSource names, ``file`` the config file's ``clusters[].cleaner`` mapping."""
    admin, file, kafka_sources = admin or {}, file or {}, kafka_sources or {}
    return {k: effective_broker_setting(k, admin=admin.get(k), file=file.get(k), admin_error=admin_error,
                                        kafka_source=kafka_sources.get(k)) for k in CLEANER_SETTINGS}
