"""Command-line flags on top of monitor.yaml (monitor.settings.configflags): alone they make a working config."""

import pytest

from monitor.settings.config import Config, ConfigError, load_config
from monitor.settings.configflags import with_command_line


def test_flags_alone(tmp_path):
    (tmp_path / "meta.properties").write_text("node.id=7\n")
    cfg = with_command_line(load_config(None), bootstrap_servers="h:9092", jmx_urls=["http://h:7071/metrics"],
                            log_dirs=[str(tmp_path)])
    c = cfg.clusters[0]
    assert c.bootstrap_servers == "h:9092" and len(c.brokers) == 1
    assert c.brokers[0].id == "7" and c.brokers[0].jmx_url == "http://h:7071/metrics"  # node.id from meta.properties
    assert c.brokers[0].log_dirs == (str(tmp_path),)


def test_several_urls_name_their_brokers_by_host_and_port(tmp_path):
    cfg = with_command_line(Config(), jmx_urls=["http://a:7071/metrics", "http://b:7071/metrics"],
                            log_dirs=[str(tmp_path)], cluster="prod", port=9999)
    c = cfg.clusters[0]
    assert c.name == "prod" and cfg.listen_port == 9999
    # no meta.properties in the log dir: its broker is "local"
    assert [(b.id, b.jmx_url, b.log_dirs) for b in c.brokers] == [
        ("a:7071", "http://a:7071/metrics", ()), ("b:7071", "http://b:7071/metrics", ()), ("local", None, (str(tmp_path),))]


def test_a_cleaner_log_flag_belongs_to_one_broker():
    with pytest.raises(ConfigError) as exc:
        with_command_line(Config(), jmx_urls=["http://a:1/m", "http://b:1/m"], cleaner_log="/l")
    assert exc.value.key == "--cleaner-log"
