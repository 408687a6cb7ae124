"""Every problem of a parsed monitor.yaml (monitor.settings.configcheck), each with its key path."""

from monitor.settings.configcheck import pattern_problems, problems, resolved_url_problems


def test_a_replaced_key_is_named_with_its_replacement():
    found = problems({"clusters": [{"brokers": [{"id": 1, "jmx_password_env": "PW"}]}]})
    assert found == [("clusters[0].brokers[0].jmx_password_env", "replaced by jmx_password: ${env:NAME}")]


def test_what_the_schema_cannot_say_is_listed_all_at_once():
    found = problems({"clusters": [{"name": "a", "topics": {"t": {"min.cleanable.dirty.ratio": 2}}},
                                   {"name": "a"}], "topics_deny": ["ok", "("]})
    assert [k for k, _ in found] == ["clusters[0].topics.t.min.cleanable.dirty.ratio", "topics_deny[1]", "clusters"]
    assert problems({"clusters": [{"name": "a"}, {"name": "b"}]}) == []


def test_patterns_by_key_path():
    assert [k for k, _ in pattern_problems("topics_allow", "(")] == ["topics_allow"]
    assert [k for k, _ in pattern_problems("topics_allow", ["a", "["])] == ["topics_allow[1]"]
    assert pattern_problems("topics_allow", None) == []


def test_a_url_that_is_no_url_once_resolved():
    written = {"prometheus_url": "http://${env:H}:9090"}
    assert resolved_url_problems(written, {"prometheus_url": "http://h:9090"}) == []
    [(key, _)] = resolved_url_problems(written, {"prometheus_url": "http://h h:9090"})
    assert key == "prometheus_url"
