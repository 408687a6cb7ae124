"""One check per kind of value, the same for a flag and for monitor.yaml's key."""

from __future__ import annotations

import argparse

import pytest

from monitor.settings.config import ConfigError, parse_config
from monitor.settings.valuecheck import bootstrap_problem, flag_type, number_problem, port_problem, url_problem


@pytest.mark.parametrize("value, why", [
    ("70000", "out of range"), (70000, "out of range"), ("-1", "out of range"), ("9x", "not a whole number"),
    (1.5, "not a whole number"), (True, "not a whole number"),
])
def test_bad_ports(value, why):
    got = port_problem(value)
    assert got.startswith("expected a port from 0 to 65535 (0: any), got ") and got.endswith(f"({why})")


@pytest.mark.parametrize("value", ["0", "9690", "65535", 0, 65535])
def test_good_ports(value):
    assert port_problem(value) is None


@pytest.mark.parametrize("url, why", [
    ("http://[::1", "the IPv6 address of the URL has no closing ]"),
    ("http://[::1]:99999/metrics", "port 99999 of the URL is out of range 1-65535"),
    ("http://kafka-1:99999/metrics", "port 99999 of the URL is out of range 1-65535"),
    ("http://kafka-1:0/metrics", "port 0 of the URL is out of range 1-65535"),
    ("http://kafka-1:7o71/metrics", "the port of the URL is not a number"),
    ("http://[zz]:7071/", "[zz] is no IPv6 address"),
    ("kafka-1:7071/metrics", "no http:// or https:// in front"),
    ("http:///metrics", "no host in the URL"),
    ("http://kafka 1/", "it has a space or a control character"),
])
def test_bad_urls(url, why):
    assert url_problem(url) == f"expected an http:// or https:// URL, got '{url}' ({why})"


@pytest.mark.parametrize("url", ["http://kafka-1:7071/metrics", "https://[::1]:8778/jolokia", "http://h/",
                                 "http://u:${env:JMX_PASSWORD}@h:7071/metrics",
                                 "http://u:${directory:/run/secrets:jmx}@h:7071/metrics"])
def test_good_urls_and_secret_references_in_them(url):
    assert url_problem(url) is None


def test_a_password_is_never_shown():
    for url in ("http://monitor:hunter2@h:99999/metrics", "http://monitor:hun ter2@h:1/", "http://m:a/b@[::1"):
        why = url_problem(url)
        assert why and "hunter2" not in why and "hun ter2" not in why and "a/b" not in why, why


@pytest.mark.parametrize("value, ok", [("k1:9092,k2:9093", True), ("[::1]:9092", True), ("k1", True),
                                       (["k1:9092", "k2:9092"], True), ("k1:99999", False), ("k1:", False),
                                       ("k1:9092,,k2:9092", False), ("[::1:9092", False)])
def test_bootstrap_servers(value, ok):
    assert (bootstrap_problem(value) is None) == ok


def test_numbers():
    shape = "a finite number of seconds above 0"
    assert number_problem("nan", shape, above=0) == f"expected {shape}, got 'nan' (not finite)"
    assert number_problem("0", shape, above=0).endswith("(out of range)")
    assert number_problem("2.5", shape, above=0) is None
    assert number_problem("2.5", "a whole number", whole=True).endswith("(not a whole number)")


def test_a_flag_and_a_config_key_get_the_same_reason():
    """``--jmx-url`` and ``brokers[].jmx_url``, ``--port`` and ``listen.port``: one check, one reason."""
    url_type, port_type = flag_type(url_problem, str), flag_type(port_problem, int)
    for parse, data, key, value in (
            (url_type, {"clusters": [{"brokers": [{"id": 1, "jmx_url": "http://[::1"}]}]},
             "clusters[0].brokers[0].jmx_url", "http://[::1"),
            (port_type, {"listen": {"port": 70000}}, "listen.port", "70000")):
        with pytest.raises(argparse.ArgumentTypeError) as flag:
            parse(value)
        with pytest.raises(ConfigError) as cfg:
            parse_config(data, "monitor.yaml")
        assert cfg.value.key == key
        assert cfg.value.reason == str(flag.value).replace("'70000'", "70000")  # YAML's number, the flag's text


@pytest.mark.parametrize("host, why", [
    ("kafka..1", "an empty label (two dots, or a dot in front)"), (".kafka", "an empty label"),
    ("-kafka", "begins or ends with -"), ("kafka-", "begins or ends with -"), ("999.1.1.1", "999.1.1.1 is no IPv4 address"),
    ("1.2.3", "1.2.3 is no IPv4 address"), ("k" * 64 + ".example", "longer than 63 characters"),
    ("a." * 127 + "bc", "longer than 253 characters"), ("kafka!1", "a character a host name cannot have"),
])
def test_a_host_that_no_resolver_takes_is_refused_before_any_lookup(host, why):
    """These failed only at the fetch ("Name or service not known", the IDNA codec's "label empty or too
    long"), as a broker that is down does (exit 1): now a usage error, the same for URL, bootstrap, address."""
    from monitor.settings.valuecheck import address_problem

    for got in (url_problem(f"http://{host}:7071/metrics"), bootstrap_problem(f"{host}:9092"), address_problem(host)):
        assert got is not None and why in got, got


@pytest.mark.parametrize("host", ["kafka-1", "kafka_1.kafka.svc.cluster.local.", "10.0.0.1", "[::1]", "localhost",
                                  "xn--bcher-kva.example", "bücher.example", "k" * 63])
def test_hosts_that_resolve_pass(host):
    from monitor.settings.valuecheck import address_problem

    assert url_problem(f"http://{host}:7071/metrics") is None and bootstrap_problem(f"{host}:9092") is None
    assert address_problem(host) is None


def test_a_percent_must_start_an_escape():
    assert "a % not followed by two hex digits" in url_problem("http://kafka-1:7071/metrics%zz")
    assert url_problem("http://kafka-1:7071/metrics?q=a%20b") is None


@pytest.mark.parametrize("address", ["0.0.0.0", "::", "::1", "[::1]", "fe80::1%eth0"])
def test_listen_addresses(address):
    from monitor.settings.valuecheck import address_problem

    assert address_problem(address) is None


@pytest.mark.parametrize("address", ["", "  "])
def test_an_empty_listen_address_is_refused_not_every_interface(address):
    """An unset variable (``--address "$ADDR"``) must not expose the page on every interface."""
    from monitor.settings.valuecheck import address_problem

    assert "empty: say 0.0.0.0 or :: to listen on every interface" in address_problem(address)
