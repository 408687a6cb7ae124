"""The collector's roles (``collect --role``, ``monitor.yaml``'s ``role``): which sources a collector reads and
which metric families it exports.

Why two roles: the per-partition figures need a broker's log dirs, read on the broker's own host (a
sidecar, a DaemonSet), one collector per broker; the admin API's figures (topic configs, consumer groups)
are the cluster's, and a collector per broker exporting them would export each group's lag once per broker
(every alert N times). So, as kafka_exporter and kminion users deploy them:

* ``cluster``: the admin API (topic configs, leaders, replicas, the brokers' cleaner settings, consumer
  groups); one per cluster. It reads no broker's files or JMX page.
* ``broker``: its broker(s)' log dirs, ``log-cleaner.log`` and JMX/Jolokia page, every series labelled
  ``broker``; one per broker. It may *read* the admin API (topic configs, the leader's LSO, the groups'
  positions it judges against the leader's replica) but exports nothing the cluster role exports.
* ``all`` (the default): both in one process, for one machine and the demo.

Which role exports each metric family is declared once, beside the family (``collectors.export.metrics``'s
``OWNER``); this module holds the names and the check of a config against its role.
"""

from __future__ import annotations

ALL, CLUSTER, BROKER = "all", "cluster", "broker"
ROLES = (ALL, CLUSTER, BROKER)
BOTH = "both"  # an owner: the collector's own health (source_up...), which every collector has of its own sources
OWNERS = (CLUSTER, BROKER, BOTH)

# the broker keys the cluster role does not read, with the command-line flag that sets each
BROKER_SOURCES = {"log_dirs": "--log-dir", "cleaner_log": "--cleaner-log", "jmx_url": "--jmx-url",
                  "jolokia_url": "--jolokia-url"}

HELP = ("cluster: the admin API only (topic configs, leaders and replicas, the brokers' cleaner settings, consumer "
        "groups), one per cluster; broker: its broker's log dirs, log-cleaner.log and JMX/Jolokia page (every "
        "partition, log dir and cleaner series, labelled broker, and ConsumerMayMissUpdates for the partitions "
        "it leads), one per broker, reading the admin API but exporting none of its series; all (default): both "
        "in one process")


def exports(role: str, owner: str) -> bool:
    """Whether a collector in ``role`` exports a family owned by ``owner``."""
    return role == ALL or owner == BOTH or owner == role


def conflicts(config) -> list[tuple[str, str]]:
    """A broker's files or JMX page given to the cluster role, as ``(key path, reason)``: wrong whatever
    the command line adds (``monitor.settings.config.parse_config`` says it of the file alone)."""
    found = []
    if config.role == CLUSTER:
        for i, c in enumerate(config.clusters):
            for j, b in enumerate(c.brokers):
                for key, flag in BROKER_SOURCES.items():
                    if getattr(b, key):
                        found.append((f"clusters[{i}].brokers[{j}].{key}",
                                      f"the cluster role reads no broker's {key} ({flag}): run it in the broker "
                                      "role (or all), or leave it out"))
    return found


def role_problems(config) -> list[tuple[str, str]]:
    """Everything the complete config (file and flags) asks of its role that the role does not do, as
    ``(key path, reason)``: ``conflicts``; the cluster role without an admin API; the broker role without
    any broker source (nothing of its own to export)."""
    found = conflicts(config)
    if config.role == CLUSTER:
        for i, c in enumerate(config.clusters):
            if not c.bootstrap_servers:
                found.append((f"clusters[{i}].bootstrap_servers",
                              "the cluster role reads the admin API: give bootstrap_servers (--bootstrap-server)"))
    elif config.role == BROKER:
        if not any(getattr(b, key) for c in config.clusters for b in c.brokers for key in BROKER_SOURCES):
            found.append(("role", "the broker role reads a broker's log dirs, log-cleaner.log or JMX page: give "
                                  "--log-dir, --cleaner-log, --jmx-url or --jolokia-url (or brokers[] in the file)"))
    return found
