"""``compaction-monitor config check FILE``: the config as read, secrets as ***, exit 0; or every
problem one a line, exit 2."""

from __future__ import annotations


import yaml

from cli.main import main
from clirun import run_cli
from monitor.settings.config import load_config, parse_config

GOOD = """
listen: {port: 9700}
clusters:
  - name: prod
    bootstrap_servers: [k1:9093, k2:9093]
    client: {security.protocol: SASL_SSL, sasl.mechanism: PLAIN, sasl.username: svc, sasl.password: hunter2,
             ssl.key.password: k3ypass, sasl.oauthbearer.client.secret: 0authS3cret}
    brokers:
      - {id: 1, jmx_url: "http://admin:jmxPa55@k1:7071/metrics", log_dirs: /data/kafka}
thresholds: {lagging_for: 45m}
prometheus_url: https://viewer:promPa55@prom:9090
"""
SECRETS = ("hunter2", "k3ypass", "0authS3cret", "jmxPa55", "promPa55")


def test_check_prints_the_config_without_secrets(tmp_path, capsys):
    p = tmp_path / "monitor.yaml"
    p.write_text(GOOD)
    assert main(["config", "check", str(p)]) == 0
    out, err = capsys.readouterr()
    assert not any(s in out + err for s in SECRETS)
    printed = yaml.safe_load(out)
    assert printed["clusters"][0]["client"]["sasl.password"] == "***"
    assert printed["clusters"][0]["client"]["sasl.username"] == "svc"
    assert printed["prometheus_url"] == "https://viewer:***@prom:9090"
    # the rest is the config as read, defaults filled in: it reads back to the same config
    cfg = load_config(p)
    assert printed["intervals"]["log_dirs"] == cfg.intervals.log_dirs == 60
    assert printed["thresholds"]["lagging_for"] == "45m"
    back = parse_config(printed)
    assert back.clusters[0].bootstrap_servers == "k1:9093,k2:9093" and back.listen_port == 9700
    assert back.thresholds == cfg.thresholds and back.intervals == cfg.intervals


def test_check_lists_every_problem_and_exits_2(tmp_path):
    p = tmp_path / "monitor.yaml"
    p.write_text("clusters:\n  - client: {sasl.password: [hunter2]}\n    topics: [a]\nintervals: {jmx: .inf}\n")
    r = run_cli("config", "check", str(p))
    assert r.returncode == 2 and r.stdout == ""
    lines = r.stderr.splitlines()
    assert lines == [
        f"compaction-monitor: config error: {p}: clusters[0].client.sasl.password: expected a string, number or "
        "boolean, got (a value, not shown: a secret)",
        f"compaction-monitor: config error: {p}: clusters[0].topics: expected a mapping of topic -> its Kafka topic "
        "configs, got a list (1 item)",
        f"compaction-monitor: config error: {p}: intervals.jmx: expected a finite number of seconds above 0, got inf",
    ]
    assert "hunter2" not in r.stderr


def test_check_missing_file_and_bad_yaml(tmp_path, capsys):
    assert main(["config", "check", str(tmp_path / "nope.yaml")]) == 2
    assert "cannot read" in capsys.readouterr().err
    (tmp_path / "bad.yaml").write_text("listen: [unclosed\n")
    assert main(["config", "check", str(tmp_path / "bad.yaml")]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "bad.yaml: (yaml)" in err


def test_check_shows_a_referenced_secret_as_its_reference(tmp_path, capsys, monkeypatch):
    d = tmp_path / "run-secrets"
    d.mkdir()
    (d / "jmx").write_text("jmxFromFile9\n")
    monkeypatch.setenv("KM_SASL_PW", "saslFromEnv7")
    p = tmp_path / "monitor.yaml"
    p.write_text("clusters:\n  - client: {sasl.password: '${env:KM_SASL_PW}'}\n"
                 f"    brokers: [{{id: 1, jmx_url: 'http://admin:${{directory:{d}:jmx}}@k1:7071/metrics'}}]\n")
    assert main(["config", "check", str(p)]) == 0
    out, err = capsys.readouterr()
    assert "saslFromEnv7" not in out + err and "jmxFromFile9" not in out + err
    printed = yaml.safe_load(out)
    assert printed["clusters"][0]["client"]["sasl.password"] == "${env:KM_SASL_PW}"
    assert printed["clusters"][0]["brokers"][0]["jmx_url"] == f"http://admin:${{directory:{d}:jmx}}@k1:7071/metrics"
    monkeypatch.delenv("KM_SASL_PW")
    assert main(["config", "check", str(p)]) == 2
    out, err = capsys.readouterr()
    assert "clusters[0].client.sasl.password: ${env:KM_SASL_PW}: environment variable KM_SASL_PW is not set" in err


def test_check_warns_of_each_secret_written_in_the_file(tmp_path, capsys):
    p = tmp_path / "monitor.yaml"
    p.write_text(GOOD)
    assert main(["config", "check", str(p)]) == 0
    err = capsys.readouterr().err
    warned = [line.split(": ")[4] for line in err.splitlines() if "warning" in line]
    assert warned == ["clusters[0].client.sasl.password", "clusters[0].client.ssl.key.password",
                      "clusters[0].client.sasl.oauthbearer.client.secret", "clusters[0].brokers[0].jmx_url",
                      "prometheus_url"]
