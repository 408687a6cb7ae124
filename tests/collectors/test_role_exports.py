"""The collector's roles without a broker: each metric family has one owning role, declared once
(``collectors.export.metrics.OWNER``), each area collector describes only its role's families, and a role given
a source it does not read is an error naming the flag (exit 2); the file's keys:
tests/monitor/settings/test_roles.py. The 3-broker run of one cluster-role
and three broker-role collectors is tests/collectors/test_roles_cluster.py."""

from __future__ import annotations

import pytest
from prometheus_client import CollectorRegistry

from cli.main import main
from collectors.export import metrics as M
from collectors.export.exporter import View, register_all
from collectors.serving.runner import Store
from monitor.settings.roles import BOTH, BROKER, CLUSTER, OWNERS, ROLES

# the collector's own health: every collector has its own sources (a broker-role collector's admin source
# is named after its brokers, so no two collectors export the same series)
SELF = {M.SRC_UP, M.SRC_LAST_SUCCESS, M.SRC_DURATION, M.SRC_ERRORS, M.SRC_LAST_ERROR, M.SRC_SHAPE}


def test_every_family_has_exactly_one_owner_and_only_the_collectors_own_health_is_both():
    assert set(M.OWNER) == set(M.METRICS)
    assert {n for n, o in M.OWNER.items() if o not in OWNERS} == set()
    assert {n for n, o in M.OWNER.items() if o == BOTH} == SELF
    # what a role reads decides: the admin API's figures are the cluster's; the log dirs', the cleaner log's,
    # the JMX page's the broker's (a few checked by hand, from where each family comes)
    assert M.OWNER[M.G_LAG] == M.OWNER[M.T_MIN_RATIO] == M.OWNER[M.P_REPLICA_INFO] == CLUSTER
    assert M.OWNER[M.BROKER_CLEANER_ENABLED] == M.OWNER[M.P_LEADER_LSO] == CLUSTER  # from the admin API
    assert M.OWNER[M.P_CAUSE] == M.OWNER[M.LOG_DIR_UP] == M.OWNER[M.BROKER_DEAD] == M.OWNER[M.CL_CLEANS] == BROKER
    assert M.OWNER[M.G_MAY_MISS] == BROKER  # judged against the leader's replica, read by its broker's collector


def _described(role: str) -> set[str]:
    registry = CollectorRegistry(auto_describe=False)
    register_all(registry, Store(), view=View(role=role))
    return {fam.name for c in list(registry._collector_to_names) for fam in c.describe()}


def test_each_role_describes_its_families_and_together_every_family_once():
    every, cluster, broker = (_described(r) for r in ROLES)
    base = {n[: -len("_total")] if n.endswith("_total") else n for n in M.METRICS}
    assert every == base  # the all role: every declared family
    assert cluster | broker == every
    assert cluster & broker == {n[: -len("_total")] if n.endswith("_total") else n for n in SELF}


@pytest.mark.parametrize("argv, named", [
    (["--role", "cluster", "--bootstrap-servers", "localhost:1", "--log-dir", "/tmp"], "--log-dir"),
    (["--role", "cluster", "--bootstrap-servers", "localhost:1", "--cleaner-log", "/tmp/x.log"], "--cleaner-log"),
    (["--role", "cluster", "--bootstrap-servers", "localhost:1", "--jmx-url", "http://localhost:1/metrics"],
     "--jmx-url"),
    (["--role", "cluster"], "bootstrap_servers"),
    (["--role", "broker", "--bootstrap-servers", "localhost:1"], "--log-dir"),
])
def test_a_role_given_what_it_does_not_read_is_exit_2_naming_the_flag(argv, named, capsys):
    assert main(["collect", "--once", *argv]) == 2
    err = capsys.readouterr().err
    assert named in err and "role" in err and "Traceback" not in err
