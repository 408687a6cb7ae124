"""Secrets never printed: librdkafka's secret properties by name, URL passwords."""

from monitor.settings.redact import REDACTED, is_secret_key, redact_url, redacted


def test_secret_keys_by_name():
    for k in ("sasl.password", "ssl.key.password", "ssl.keystore.password", "sasl.oauthbearer.client.secret",
              "ssl.key.pem", "sasl.jaas.config", "sasl.oauthbearer.config", "MY_PASSWORD", "api_token"):
        assert is_secret_key(k), k
    for k in ("security.protocol", "sasl.mechanism", "sasl.username", "ssl.ca.location", "tombstone_growth_per_hour",
              "bootstrap_servers"):
        assert not is_secret_key(k), k


def test_url_passwords():
    assert redact_url("http://admin:pa55@k1:7071/metrics") == "http://admin:***@k1:7071/metrics"
    assert redact_url("https://tok3n@prom/api") == "https://***@prom/api"
    assert redact_url("http://k1:7071/metrics") == "http://k1:7071/metrics"
    assert redact_url("a http://u:p@h/ and https://v:q@i/") == "a http://u:***@h/ and https://v:***@i/"


def test_redacted_walks_the_config():
    data = {"clusters": [{"client": {"sasl.password": "hunter2", "sasl.username": "svc", "ssl.key.password": 1234},
                          "brokers": [{"jmx_url": "http://u:p@h/m"}],
                          "topics": {"password-resets": {"segment.ms": 5}}}]}
    got = redacted(data)
    assert got["clusters"][0]["client"] == {"sasl.password": REDACTED, "sasl.username": "svc",
                                            "ssl.key.password": REDACTED}
    assert got["clusters"][0]["brokers"][0]["jmx_url"] == "http://u:***@h/m"
    assert got["clusters"][0]["topics"] == {"password-resets": {"segment.ms": 5}}  # a topic's name is no secret
    assert data["clusters"][0]["client"]["sasl.password"] == "hunter2"  # a copy


def test_a_password_with_a_slash_or_an_at_sign_is_redacted_whole():
    """A secret put into a URL without percent-encoding: the user part ends at the authority's last @."""
    from monitor.settings.redact import redact_url

    assert redact_url("http://u:a/b[c@127.0.0.1:1/metrics") == "http://u:***@127.0.0.1:1/metrics"
    assert redact_url("http://u:x@y:1@h:1/j") == "http://u:***@h:1/j"
    assert redact_url("http://u:p@h/x@y") == "http://u:***@h/x@y"
    assert redact_url("see http://u:pw@h:1/m and https://a:b@c") == "see http://u:***@h:1/m and https://a:***@c"
    assert redact_url("http://host:8080/path") == "http://host:8080/path"
