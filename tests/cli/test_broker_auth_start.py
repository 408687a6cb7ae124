"""``broker start --security sasl_ssl --jmx-auth`` (issue 42): a one-node local cluster with the auth the
test cluster runs (SASL_SSL with SCRAM-SHA-512 over TLS from keytool's CA, ACLs on, the users admin,
monitor and blind, the JMX exporter agent behind HTTP Basic auth). The start prints the client settings a
user passes to ``collect`` and the file holding them (mode 0600, every password by reference to its own
mode-0600 file), never a password; ``collect --once --config`` that file reaches every source as the
least-privilege user monitor. Both commands run in-process (the child process is not the point); the
node is stopped with ``broker stop``."""

from __future__ import annotations

import base64
import stat
import urllib.request
from pathlib import Path

import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from kafkatools import cli_main, localcluster, wait_for
from monitor.contract.metricnames import PREFIX

pytestmark = pytest.mark.slow  # starts a secured node of its own (keytool, kafka-storage, kafka-configs, kafka-acls)


def test_a_broker_started_with_the_clusters_auth_is_collected_from_with_the_printed_config(tmp_path, capsys):
    d = tmp_path / "secured"
    try:
        assert cli_main(["broker", "start", "--dir", str(d), "--security", "sasl_ssl", "--jmx-auth"]) == 0
        started = capsys.readouterr()
        state = localcluster.read_cluster(d)
        secrets = [state.password(u) for u in state.password_files] + [Path(state.jmx_password_file).read_text()]
        assert all(s and s not in started.out + started.err for s in secrets)
        config = Path(state.collect_config)
        assert f"collect:     compaction-monitor collect --config {config}" in started.out
        assert stat.S_IMODE(config.stat().st_mode) == 0o600
        assert all(stat.S_IMODE(Path(p).stat().st_mode) == 0o600
                   for p in [*state.password_files.values(), state.jmx_password_file])
        assert not any(s in config.read_text() for s in secrets)  # references, not the passwords
        # the client settings printed are the file's, the password a reference to the monitor user's file
        client = yaml.safe_load(config.read_text())["clusters"][0]["client"]
        folder, name = Path(state.password_files["monitor"]).parent, Path(state.password_files["monitor"]).name
        assert client == {"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512",
                          "ssl.ca.location": state.ca_pem, "sasl.username": "monitor",
                          "sasl.password": f"${{directory:{folder}:{name}}}"}
        assert [line for line in started.out.splitlines() if line.startswith("client:")] == [
            f"client:      {k}={v}" for k, v in client.items()]

        [node] = state.brokers()
        # the agent's first page after the JVM starts can take longer than the collector's JMX timeout on a
        # loaded machine: asked until it has answered once (with the Basic auth the config refers to)
        auth = base64.b64encode(f"{state.jmx_username}:{secrets[-1]}".encode()).decode()
        wait_for(lambda: urllib.request.urlopen(urllib.request.Request(
            node.jmx_url, headers={"Authorization": f"Basic {auth}"}), timeout=60).status == 200, 120,
            "the JMX exporter agent's first page")
        code = cli_main(["collect", "--once", "--config", str(config)])
        collected = capsys.readouterr()
        assert code == 0, collected.err
        up = {s.labels["source"]: s.value for f in text_string_to_metric_families(collected.out) for s in f.samples
              if s.name == PREFIX + "source_up"}
        assert up == {"admin:local": 1, "consumer_groups:local": 1, f"jmx:local:{node.node_id}": 1,
                      f"log_dirs:local:{node.node_id}": 1}, (up, collected.err[-3000:])
        assert not any(s in collected.out + collected.err for s in secrets)
    finally:
        cli_main(["broker", "stop", "--dir", str(d)])
    assert not any(localcluster.one.is_alive(b.pid) for b in localcluster.read_cluster(d).brokers())
