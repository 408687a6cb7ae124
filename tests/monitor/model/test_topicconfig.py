"""The one topic-config precedence (``effective_config``): admin API, else config file, else Kafka's
defaults, then command-line overrides; expected defaults are Kafka's (LogConfig, TopicConfig docs)."""

from __future__ import annotations

import math

import pytest

from monitor.model.topicconfig import (ADMIN, BROKER_DEFAULTS, CONFIG_FILE, DEFAULT, NOT_LISTED, REFUSED, UNKNOWN,
                                 AdminRefusal, ConfigValueError, TopicConfig, effective_broker_setting, effective_config)

KAFKA_DEFAULTS = {  # https://kafka.apache.org/documentation/#topicconfigs
    "cleanup.policy": "delete", "min.cleanable.dirty.ratio": "0.5", "min.compaction.lag.ms": "0",
    "max.compaction.lag.ms": "9223372036854775807", "delete.retention.ms": "86400000",
    "segment.bytes": "1073741824", "segment.ms": "604800000", "file.delete.delay.ms": "60000",
    "retention.ms": "604800000", "retention.bytes": "-1", "max.decompressed.message.bytes": "2147483639",
}


def test_nothing_known_is_kafkas_defaults():
    got = effective_config("orders")
    assert got.config.to_strings() == KAFKA_DEFAULTS
    assert got.source == "default" and set(got.sources.values()) == {"default"}


@pytest.mark.parametrize("topic, compacted", [("orders", True), ("__consumer_offsets", False),
                                              ("__transaction_state", False)])
def test_evidence_of_compaction_makes_the_default_policy_compact(topic, compacted):
    got = effective_config(topic, compacted=compacted)
    assert got.config.cleanup_policy == ("compact",) and got.config.compacted
    assert got.config.min_cleanable_dirty_ratio == 0.5 and got.source == "default"


def test_config_file_over_defaults_and_names_a_compacted_topic():
    got = effective_config("orders", file={"min.cleanable.dirty.ratio": "0.2", "unknown.key": "x"})
    assert got.config.cleanup_policy == ("compact",) and got.config.min_cleanable_dirty_ratio == 0.2
    assert got.config.delete_retention_ms == 86_400_000
    assert got.sources["min.cleanable.dirty.ratio"] == "config" and got.sources["cleanup.policy"] == "config"
    assert got.sources["delete.retention.ms"] == "default" and "unknown.key" not in got.sources
    assert got.source == "config"
    assert effective_config("t", file={"cleanup.policy": "delete"}, compacted=True).config.cleanup_policy == ("delete",)


def test_admin_wins_over_the_file_as_a_whole():
    broker = TopicConfig(cleanup_policy=("compact", "delete"), min_cleanable_dirty_ratio=0.9)
    got = effective_config("orders", admin=broker, file={"min.cleanable.dirty.ratio": "0.1",
                                                         "delete.retention.ms": "5"})
    assert got.config == broker and got.source == "admin" and set(got.sources.values()) == {"admin"}


def test_command_line_overrides_value_by_value():
    broker = TopicConfig(cleanup_policy=("compact",), delete_retention_ms=1000)
    got = effective_config("orders", admin=broker, command_line={"min.cleanable.dirty.ratio": "0.3"})
    assert got.config.min_cleanable_dirty_ratio == 0.3 and got.config.delete_retention_ms == 1000
    assert got.sources["min.cleanable.dirty.ratio"] == "command-line" and got.sources["delete.retention.ms"] == "admin"
    assert got.source == "command-line"
    over_file = effective_config("orders", file={"segment.ms": "10", "min.cleanable.dirty.ratio": "0.2"},
                                 command_line={"segment.ms": "20"})
    assert over_file.config.segment_ms == 20 and over_file.config.min_cleanable_dirty_ratio == 0.2
    # a topic named only on the command line is a compacted topic, as one named in the file
    assert effective_config("orders", command_line={"segment.ms": "20"}).config.compacted


def test_bad_values_name_the_key():
    with pytest.raises(ConfigValueError, match="min.cleanable.dirty.ratio"):
        effective_config("orders", command_line={"min.cleanable.dirty.ratio": "2"})
    with pytest.raises(ConfigValueError, match="segment.ms"):
        effective_config("orders", file={"segment.ms": "soon"})


def test_effective_configs_of_every_topic_either_source_knows():
    from monitor.model.topicconfig import effective_configs

    admin = {"a": TopicConfig.from_strings({"cleanup.policy": "compact", "min.cleanable.dirty.ratio": "0.3"})}
    file = {"a": {"min.cleanable.dirty.ratio": 0.9}, "b": {"delete.retention.ms": 1000}}
    got = effective_configs(admin, file)
    assert set(got) == {"a", "b"}
    assert got["a"].min_cleanable_dirty_ratio == 0.3  # the admin API's config is the topic's whole config
    assert got["b"].delete_retention_ms == 1000 and got["b"].compacted and got["b"].min_cleanable_dirty_ratio == 0.5


def test_broker_setting_precedence_admin_then_file_then_kafkas_default():
    key = "transaction.max.timeout.ms"
    # Kafka's default: 15 minutes (TransactionStateManagerConfig, the broker configs' documentation)
    assert effective_broker_setting(key) == (d := effective_broker_setting(key, admin=None, file=None))
    assert (d.value, d.source) == (900_000, "default")
    assert (lambda s: (s.value, s.source))(effective_broker_setting(key, file=60_000)) == (60_000, "config")
    assert (lambda s: (s.value, s.source))(effective_broker_setting(key, admin=7_200_000, file=60_000)) == (
        7_200_000, "admin")
    with pytest.raises(KeyError, match="log.retention.ms"):
        effective_broker_setting("log.retention.ms")


def test_cleaner_settings_unknown_when_the_broker_refused_default_only_when_nobody_asked():
    from monitor.model.topicconfig import CLEANER_SETTINGS, ConfigValueError, broker_cleaner_settings

    asked = broker_cleaner_settings(admin={"log.cleaner.enable": "false", "log.cleaner.threads": "3"},
                                    admin_error="broker 1 did not list it")
    assert (asked["log.cleaner.enable"].value, asked["log.cleaner.enable"].source) == (False, "admin")
    assert (asked["log.cleaner.threads"].value, asked["log.cleaner.threads"].source) == (3, "admin")
    assert (asked["log.cleaner.backoff.ms"].value, asked["log.cleaner.backoff.ms"].source) == (None, "unknown")
    refused = broker_cleaner_settings(file={"log.cleaner.threads": "2"}, admin_error="ClusterAuthorizationException")
    assert (refused["log.cleaner.threads"].value, refused["log.cleaner.threads"].source) == (2, "config")
    assert all(not refused[k].known and refused[k].reason == "ClusterAuthorizationException"
               for k in CLEANER_SETTINGS if k != "log.cleaner.threads")
    # nobody asked (no bootstrap server): Kafka's defaults (CleanerConfig), named as such
    nobody = broker_cleaner_settings()
    assert {k: (s.value, s.source) for k, s in nobody.items()} == {
        "log.cleaner.enable": (True, "default"), "log.cleaner.threads": (1, "default"),
        "log.cleaner.dedupe.buffer.size": (134_217_728, "default"),
        "log.cleaner.io.buffer.load.factor": (0.9, "default"),
        "log.cleaner.io.max.bytes.per.second": (1.7976931348623157e308, "default"),
        "log.cleaner.backoff.ms": (15_000, "default")}
    with pytest.raises(ConfigValueError, match="log.cleaner.threads"):
        broker_cleaner_settings(admin={"log.cleaner.threads": "0"})
    with pytest.raises(ConfigValueError, match="log.cleaner.enable"):
        broker_cleaner_settings(admin={"log.cleaner.enable": "yes"})


def test_retention_may_be_unlimited_but_other_settings_may_not_be_negative():
    """Kafka takes retention.ms / retention.bytes of -1 as no limit (TopicConfig docs)."""
    c = TopicConfig.from_strings({"cleanup.policy": "compact,delete", "retention.ms": "-1", "retention.bytes": "-1"})
    assert (c.retention_ms, c.retention_bytes, c.deletes, c.compacted) == (-1, -1, True, True)
    with pytest.raises(ConfigValueError, match="segment.ms"):
        TopicConfig.from_strings({"segment.ms": "-1"})


# ------------------------------------------------------------------ asked and not told: unknown, never defaults

def test_a_config_the_admin_api_refused_is_unknown_not_kafkas_defaults():
    why = AdminRefusal(REFUSED, "refused: no DescribeConfigs on TOPIC t for User:blind")
    got = effective_config("t", compacted=True, refusal=why)
    assert got.source == UNKNOWN and got.refusal == why
    assert not got.known("min.cleanable.dirty.ratio") and not got.known("delete.retention.ms")
    assert set(got.unknown_keys) == set(TopicConfig().to_strings())
    assert got.config.compacted  # the cleaner's checkpoint says it is compacted; the policy is still unknown


def test_monitor_yaml_gives_what_it_names_and_says_so_the_rest_stays_unknown():
    why = AdminRefusal(NOT_LISTED, "the admin API does not list t")
    got = effective_config("t", file={"min.cleanable.dirty.ratio": "0.1", "delete.retention.ms": "60000"},
                           refusal=why)
    assert got.config.min_cleanable_dirty_ratio == 0.1 and got.config.delete_retention_ms == 60000
    assert got.sources["min.cleanable.dirty.ratio"] == CONFIG_FILE == got.sources["delete.retention.ms"]
    assert got.known("min.cleanable.dirty.ratio", "delete.retention.ms")
    assert not got.known("min.compaction.lag.ms") and got.source == CONFIG_FILE and got.refusal == why
    full = {k: v for k, v in TopicConfig(cleanup_policy=("compact",)).to_strings().items()}
    got = effective_config("t", file=full, refusal=why)  # every value given: known, from monitor.yaml
    assert got.source == CONFIG_FILE and got.refusal is None and got.unknown_keys == ()


def test_the_admin_config_wins_and_nobody_asked_is_kafkas_default_stated_as_such():
    admin = TopicConfig(cleanup_policy=("compact",), min_cleanable_dirty_ratio=0.2)
    assert effective_config("t", admin=admin, refusal=AdminRefusal(REFUSED, "x")).source == ADMIN
    got = effective_config("t", compacted=True)
    assert got.source == DEFAULT and got.refusal is None and got.known("min.cleanable.dirty.ratio")


def test_no_throttle_is_kafkas_default_and_above_only():
    """Kafka's Throttler sleeps only while the rate exceeds the setting: at Double.MAX_VALUE (its
    default) or +Inf it never does, at any finite setting below it does. One test decides it (the model,
    the estimate and the dashboards' throttle line used to differ: >= 1e300 in one, == in another)."""
    from monitor.model.cleanerio import IoRate, throttle_ratio
    from monitor.model.estimate import CleanerParams
    from monitor.model.topicconfig import NO_THROTTLE, no_throttle

    assert NO_THROTTLE == BROKER_DEFAULTS["log.cleaner.io.max.bytes.per.second"] == 1.7976931348623157e308
    assert no_throttle(NO_THROTTLE) and no_throttle(math.inf)
    assert not no_throttle(1e300) and not no_throttle(500_000.0)
    # a huge but finite setting is a throttle Kafka applies (however far off): the ratio is a number
    assert throttle_ratio(IoRate(1e12, 300, ""), 1e300) == pytest.approx(1e-288)
    assert CleanerParams(io_max_bytes_per_second=1e300).throttle == 1e300
    assert CleanerParams(io_max_bytes_per_second=NO_THROTTLE).throttle is None


def test_the_dashboards_throttle_line_states_no_throttle_in_promql():
    """The Grafana panel draws the throttle only where ``no_throttle`` is false: its PromQL comparison,
    evaluated as Prometheus would, agrees with the model on every kind of setting (+Inf included)."""
    import re

    from monitor.contract.panels import panel
    from monitor.contract.rules import OPS
    from monitor.model.topicconfig import no_throttle

    (expr,) = [q.expr for q in panel("cleaner_io").queries if "io_max_bytes_per_second" in q.expr]
    op, number = re.fullmatch(r".*\} (\S+) (\S+)", expr).groups()
    for limit in (0.0, 500_000.0, 1e300, BROKER_DEFAULTS["log.cleaner.io.max.bytes.per.second"], math.inf):
        assert OPS[op](limit, float(number)) is (not no_throttle(limit)), (expr, limit)


def test_an_empty_cleanup_policy_is_neither_compacted_nor_deleted_and_said_so():
    """Kafka 4.2+ (KIP-1161): ``cleanup.policy=`` set to nothing keeps every record forever. It is not Kafka's
    default (delete) and not compact: both halves off, and the text says so instead of a blank."""
    empty = TopicConfig.from_strings({"cleanup.policy": ""})
    assert empty.cleanup_policy == () and not empty.compacted and not empty.deletes
    assert "neither compacted nor deleted" in empty.policy_text and "KIP-1161" in empty.policy_text
    assert TopicConfig.from_strings({}).policy_text == "delete"  # absent: Kafka's default, not empty
    assert TopicConfig.from_strings({"cleanup.policy": "compact,delete"}).policy_text == "compact,delete"
