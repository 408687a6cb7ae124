"""monitor.settings.topicfilter: whole-name regular expressions, allow then deny, and their check at load."""

import pytest

from monitor.settings.config import ConfigError, parse_config
from monitor.settings.topicfilter import PatternError, TopicFilter


def test_allow_and_deny_match_the_whole_name_and_deny_wins():
    f = TopicFilter(allow=("orders.*", "payments"), deny=(r"orders\.dlq",))
    assert f("orders") and f("orders.v2") and f("payments")
    assert not f("payments-v2")  # the whole name must match, as Prometheus' relabelling
    assert not f("orders.dlq")
    assert not f("audit")
    assert TopicFilter()("anything") and TopicFilter().everything
    assert not TopicFilter(deny=("__.*",))("__consumer_offsets") and TopicFilter(deny=("__.*",))("x__y")


def test_a_pattern_that_is_no_regex_is_named():
    with pytest.raises(PatternError, match=r"'\(' is not a regular expression"):
        TopicFilter(deny=("ok", "("))


def test_config_loads_the_patterns_and_granularity_and_names_a_bad_one():
    cfg = parse_config({"granularity": "partition", "topics_allow": "orders.*", "topics_deny": ["__.*"]})
    assert (cfg.granularity, cfg.topics_allow, cfg.topics_deny) == ("partition", ("orders.*",), ("__.*",))
    assert parse_config({}).granularity == "topic"
    with pytest.raises(ConfigError) as exc:
        parse_config({"topics_deny": ["fine", "[a-"]})
    assert exc.value.key == "topics_deny[1]" and "not a regular expression" in exc.value.reason
    with pytest.raises(ConfigError) as exc:
        parse_config({"granularity": "broker"})
    assert exc.value.key == "granularity" and "topic or partition" in exc.value.reason
