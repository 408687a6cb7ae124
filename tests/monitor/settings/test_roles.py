"""The collector's roles in the config (``monitor.settings.roles``): the file giving the cluster role a broker's
files is refused naming the key; the complete config (file and flags) of a role that has nothing of its own
to read, or lacks what it needs, is named by ``role_problems``."""

from __future__ import annotations

import pytest

from monitor.settings.config import ConfigError, parse_config
from monitor.settings.roles import BROKER, exports, role_problems


def test_the_file_giving_the_cluster_role_a_log_dir_names_the_key(tmp_path):
    with pytest.raises(ConfigError) as exc:
        parse_config({"role": "cluster", "clusters": [{"name": "c", "bootstrap_servers": "h:1",
                                                       "brokers": [{"id": 1, "log_dirs": [str(tmp_path)]}]}]},
                     "monitor.yaml")
    assert exc.value.key == "clusters[0].brokers[0].log_dirs"
    assert "monitor.yaml: clusters[0].brokers[0].log_dirs: the cluster role" in str(exc.value)
    with pytest.raises(ConfigError) as exc:
        parse_config({"role": "both"})
    assert exc.value.key == "role"
    assert parse_config({"role": "broker"}).role == BROKER and parse_config({}).role == "all"


def test_role_problems_of_the_complete_config():
    cluster = parse_config({"role": "cluster", "clusters": [{"name": "c", "brokers": [{"id": 1}]}]})
    assert [k for k, _ in role_problems(cluster)] == ["clusters[0].bootstrap_servers"]
    broker = parse_config({"role": "broker", "clusters": [{"name": "c", "bootstrap_servers": "h:1",
                                                           "brokers": [{"id": 1}]}]})
    assert [k for k, _ in role_problems(broker)] == ["role"]
    ok = parse_config({"role": "broker", "clusters": [{"name": "c", "brokers": [{"id": 1, "cleaner_log": "/x"}]}]})
    assert role_problems(ok) == [] and role_problems(parse_config({})) == []


def test_exports_each_owner_in_its_role_and_the_all_role_everything():
    assert [exports(r, "cluster") for r in ("all", "cluster", "broker")] == [True, True, False]
    assert [exports(r, "broker") for r in ("all", "cluster", "broker")] == [True, False, True]
    assert all(exports(r, "both") for r in ("all", "cluster", "broker"))
