"""monitor.settings.jmxtemplate: ``{node_id}`` filled with a broker's node id, a ``${...}`` secret
reference left for later; a template without ``{node_id}``, with another placeholder or that is no URL is
an error naming the flag (argparse, exit 2) or the key path (monitor.yaml, exit 2); a template with
nothing to fill it from (no log dir, the cluster role) too."""

from __future__ import annotations

import pytest

from cli.main import main
from monitor.settings.config import ClusterConfig, Config, parse_config
from monitor.settings.jmxtemplate import expand, template_problem, template_problems

STRIMZI = "http://my-cluster-broker-{node_id}.my-cluster-kafka-brokers.kafka.svc:9404/metrics"


def test_node_id_is_filled_everywhere_it_stands_and_a_secret_reference_is_left():
    assert template_problem(STRIMZI) is None
    assert expand(STRIMZI, "7") == "http://my-cluster-broker-7.my-cluster-kafka-brokers.kafka.svc:9404/metrics"
    t = "http://u:${env:JMX_PW}@kafka-{node_id}:7071/metrics?b={node_id}"
    assert template_problem(t) is None
    assert expand(t, "12") == "http://u:${env:JMX_PW}@kafka-12:7071/metrics?b=12"


@pytest.mark.parametrize("template, why", [
    ("http://kafka-1:7071/metrics", "no {node_id}"),
    ("http://kafka-{broker_id}:7071/metrics", "it has {broker_id}"),
    ("http://{pod}-{node_id}:7071/metrics", "it has {pod}"),
    ("http://kafka-{node_id}:{port}/metrics", "it has {port}"),
    ("kafka-{node_id}:7071/metrics", "no http:// or https:// in front"),
    ("http://kafka-{node_id}:99999/metrics", "port 99999"),
    (7071, "got 7071"),
])
def test_a_template_that_cannot_give_each_broker_its_page_is_refused_with_the_reason(template, why):
    assert why in template_problem(template)


def test_the_flag_is_checked_by_argparse_naming_it(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["collect", "--once", "--log-dir", "/tmp", "--jmx-url-template", "http://kafka-1:7071/metrics"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "argument --jmx-url-template" in err and "no {node_id}" in err


def test_the_key_is_checked_naming_its_path(tmp_path, capsys):
    cfg = tmp_path / "monitor.yaml"
    cfg.write_text("clusters:\n  - name: c\n    jmx_url_template: 'http://kafka-{id}:7071/metrics'\n"
                   "    brokers: [{id: 1, log_dirs: [/tmp]}]\n")
    assert main(["collect", "--once", "--config", str(cfg)]) == 2
    err = capsys.readouterr().err
    assert f"{cfg}: clusters[0].jmx_url_template" in err and "it has {id}" in err
    good = parse_config({"clusters": [{"name": "c", "jmx_url_template": STRIMZI}]})
    assert good.clusters[0].jmx_url_template == STRIMZI


def test_a_template_with_nothing_to_fill_it_from_is_exit_2(capsys):
    no_log_dir = Config(clusters=(ClusterConfig(name="c", jmx_url_template=STRIMZI),))
    [(key, why)] = template_problems(no_log_dir)
    assert key == "clusters[0].jmx_url_template" and "--jmx-url-template" in why and "--log-dir" in why
    assert main(["collect", "--once", "--role", "broker", "--jmx-url-template", STRIMZI,
                 "--jolokia-url", "http://127.0.0.1:1/jolokia"]) == 2
    assert "--log-dir" in capsys.readouterr().err
    assert main(["collect", "--once", "--role", "cluster", "--bootstrap-servers", "127.0.0.1:1",
                 "--jmx-url-template", STRIMZI]) == 2
    assert "the cluster role reads no broker's JMX page" in capsys.readouterr().err
