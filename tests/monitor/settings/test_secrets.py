"""``${env:NAME}``, ``${directory:DIR:NAME}`` and ``${file:PATH:KEY}`` references in monitor.yaml
(``monitor.settings.secrets``): resolved at load, a reference that cannot be resolved is a config error
naming the key and the reference, never a value."""

from __future__ import annotations

import os
import subprocess

import pytest

from monitor.settings.config import ConfigError, load_config, parse_config
from monitor.settings.secrets import read_properties

PW = "Zq8-s3cr3t-pw"

YAML = """
clusters:
  - name: prod
    bootstrap_servers: k1:9093
    client: {security.protocol: SASL_SSL, sasl.username: svc, sasl.password: "${env:KM_TEST_PW}"}
    brokers:
      - {id: 1, jmx_url: "http://admin:${directory:%(dir)s:jmx}@k1:7071/metrics"}
      - {id: 2, jolokia_url: "http://admin:${file:%(props)s:jolokia.password}@k2:8778/jolokia"}
"""


def _files(tmp_path):
    d = tmp_path / "secrets"
    d.mkdir()
    (d / "jmx").write_text(PW + "-jmx\n")  # as `echo pw > file` writes it: the newline is no part of it
    props = tmp_path / "kafka.properties"
    props.write_text(f"# comment\n! also a comment\nother = x\njolokia.password = {PW}-jol\\\n   okia\n")
    return d, props


def test_references_resolve_from_the_environment_a_directory_and_a_properties_file(tmp_path):
    d, props = _files(tmp_path)
    p = tmp_path / "monitor.yaml"
    p.write_text(YAML % {"dir": d, "props": props})
    cfg = load_config(p, environ={"KM_TEST_PW": PW})
    c = cfg.clusters[0]
    assert c.client["sasl.password"] == PW and c.client["sasl.username"] == "svc"
    assert c.brokers[0].jmx_url == f"http://admin:{PW}-jmx@k1:7071/metrics"
    assert c.brokers[1].jolokia_url == f"http://admin:{PW}-jolokia@k2:8778/jolokia"


def test_the_process_environment_is_the_default(tmp_path, monkeypatch):
    monkeypatch.setenv("KM_TEST_PW", PW)
    cfg = parse_config({"clusters": [{"client": {"sasl.password": "${env:KM_TEST_PW}"}}]})
    assert cfg.clusters[0].client["sasl.password"] == PW


@pytest.mark.parametrize("ref, key, words", [
    ("${env:KM_NOT_SET}", "clusters[0].client.sasl.password", "environment variable KM_NOT_SET is not set"),
    ("${directory:/nonexistent-km:pw}", "clusters[0].client.sasl.password", "cannot read /nonexistent-km/pw"),
    ("${directory:/tmp:../etc/passwd}", "clusters[0].client.sasl.password", "must be a file name"),
    ("${vault:secret/kafka:pw}", "clusters[0].client.sasl.password", "unknown provider 'vault'"),
])
def test_an_unresolvable_reference_is_a_config_error_naming_key_and_reference(ref, key, words):
    with pytest.raises(ConfigError) as e:
        parse_config({"clusters": [{"client": {"sasl.password": ref}}]}, environ={})
    assert e.value.key == key and words in e.value.reason and ref in e.value.reason


def test_an_unreadable_or_keyless_file_is_named_and_its_content_never_shown(tmp_path):
    d, props = _files(tmp_path)
    with pytest.raises(ConfigError) as e:
        parse_config({"clusters": [{"client": {"sasl.password": f"${{file:{props}:missing}}"}}]}, environ={})
    assert "no key missing in" in e.value.reason and PW not in str(e.value)
    os.chmod(d / "jmx", 0)
    if os.access(d / "jmx", os.R_OK):  # root reads anything: a folder in the file's place is unreadable too
        (d / "jmx").unlink()
        (d / "jmx").mkdir()
    with pytest.raises(ConfigError) as e:
        parse_config({"clusters": [{"brokers": [{"id": 1, "jmx_url": f"http://u:${{directory:{d}:jmx}}@h:1/"}]}]},
                     environ={})
    assert e.value.key == "clusters[0].brokers[0].jmx_url" and str(d / "jmx") in e.value.reason
    assert PW not in str(e.value)


def test_every_bad_reference_is_listed():
    with pytest.raises(ConfigError) as e:
        parse_config({"clusters": [{"client": {"sasl.password": "${env:A_KM}", "ssl.key.password": "${env:B_KM}"}}]},
                     environ={})
    assert [p.key for p in e.value.problems] == ["clusters[0].client.sasl.password",
                                                 "clusters[0].client.ssl.key.password"]


PROPERTIES = ("a=1\nb : 2\nc 3\nd\\:e=4\nf=x\\\n    y\ng=\\u0041\\t\n  # not a key\n! nor this\n"
              "h = spaced value  \nonly-key\ni=a\\\\\nj==x\nk:=y\n\tl\t=\tm\n")


def test_properties_as_java_reads_them(tmp_path):
    """The reader against java.util.Properties.load itself (what Kafka's FileConfigProvider calls), run
    by the JDK the broker tests use."""
    import shutil

    java_bin = shutil.which("java")
    if java_bin is None:
        pytest.fail("no java on PATH: the broker tests need a JDK 17+ too")
    (tmp_path / "p.properties").write_text(PROPERTIES)
    (tmp_path / "Dump.java").write_text(
        "import java.io.*; import java.util.*;\n"
        "public class Dump { public static void main(String[] a) throws Exception {\n"
        "  Properties p = new Properties(); p.load(new FileReader(a[0]));\n"
        "  for (String k : new TreeSet<>(p.stringPropertyNames())) {\n"
        "    System.out.print(k.length() + \":\" + k + p.getProperty(k).length() + \":\" + p.getProperty(k)); } } }\n")
    out = subprocess.run([java_bin, str(tmp_path / "Dump.java"), str(tmp_path / "p.properties")],
                         capture_output=True, text=True, timeout=120, check=True).stdout
    java, i = {}, 0
    while i < len(out):  # length-prefixed key, value pairs
        kn, _, rest = out[i:].partition(":")
        key = rest[:int(kn)]
        vn, _, rest2 = rest[int(kn):].partition(":")
        java[key] = rest2[:int(vn)]
        i = len(out) - len(rest2) + int(vn)
    assert read_properties(PROPERTIES) == java
    assert java["f"] == "xy" and java["g"] == "A\t" and java["d:e"] == "4"  # the cases are really there


def test_a_url_flag_takes_a_reference_too(monkeypatch):
    from monitor.settings.config import Config
    from monitor.settings.configflags import with_command_line

    monkeypatch.setenv("KM_TEST_PW", PW)
    cfg = with_command_line(Config(), jmx_urls=["http://u:${env:KM_TEST_PW}@h:7071/metrics"])
    assert cfg.clusters[0].brokers[0].jmx_url == f"http://u:{PW}@h:7071/metrics"
    monkeypatch.delenv("KM_TEST_PW")
    with pytest.raises(ConfigError) as e:
        with_command_line(Config(), jolokia_urls=["http://u:${env:KM_TEST_PW}@h:8778/jolokia"])
    assert e.value.key == "--jolokia-url" and "KM_TEST_PW is not set" in e.value.reason
