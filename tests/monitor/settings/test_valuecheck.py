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
