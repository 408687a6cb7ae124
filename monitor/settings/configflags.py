"""Command-line flags on top of ``monitor.yaml``: ``--bootstrap-server``, ``--jmx-url``, ``--log-dir``...
add to (or create) the first cluster, each broker named by its log dir's node.id or its URL.

Apart from the file's loading (``monitor.settings.config``) because it is the command line's: its
errors name the flag, and a URL's password is given by reference here too (a literal one would show
in ``ps``).
"""

from __future__ import annotations

from dataclasses import replace

from monitor.settings.config import BrokerConfig, ClusterConfig, Config, ConfigError

def with_command_line(cfg: Config, *, bootstrap_servers=None, jmx_urls=(), jolokia_urls=(), log_dirs=(),
                      cleaner_log=None, cluster=None, port=None, address=None, jmx_url_template=None) -> Config:
    """Flags on top of a file: they add to (or create) the first cluster. ``cleaner_log`` belongs to the
    one broker the flags describe (with several, give each its ``cleaner_log`` in the file)."""
    clusters = list(cfg.clusters) or [ClusterConfig(name=cluster or "default")]
    c = clusters[0]
    brokers = list(c.brokers)
    # a URL's password by reference on the command line too ('http://u:${env:JMX_PASSWORD}@h:7071/metrics',
    # quoted for the shell): a literal one would show in `ps`
    jmx_urls, jolokia_urls = _resolved("--jmx-url", jmx_urls), _resolved("--jolokia-url", jolokia_urls)
    jmx_urls, jolokia_urls, log_dirs = list(jmx_urls), list(jolokia_urls), list(log_dirs)
    if len(jmx_urls) <= 1 and len(jolokia_urls) <= 1 and (jmx_urls or jolokia_urls or log_dirs or cleaner_log):
        # one broker described by flags: one label for its gauges, its partitions and its cleaner log
        url = (jmx_urls or jolokia_urls or [None])[0]
        bid = _node_id(log_dirs) or (_broker_id_from_url(url, 0) if url else "local")
        brokers.append(BrokerConfig(id=bid, jmx_url=jmx_urls[0] if jmx_urls else None,
                                    jolokia_url=jolokia_urls[0] if jolokia_urls else None, log_dirs=tuple(log_dirs),
                                    cleaner_log=cleaner_log))
    else:
        if cleaner_log:
            raise ConfigError("--cleaner-log", "belongs to one broker: with several --jmx-url/--jolokia-url, "
                              "give each broker's cleaner_log in the config file")
        for i, url in enumerate(jmx_urls):
            brokers.append(BrokerConfig(id=_broker_id_from_url(url, i), jmx_url=url))
        for i, url in enumerate(jolokia_urls):
            brokers.append(BrokerConfig(id=_broker_id_from_url(url, i), jolokia_url=url))
        if log_dirs:
            brokers.append(BrokerConfig(id=_node_id(log_dirs) or "local", log_dirs=tuple(log_dirs)))
    c = replace(c, brokers=tuple(brokers), bootstrap_servers=bootstrap_servers or c.bootstrap_servers,
                name=cluster or c.name, jmx_url_template=jmx_url_template or c.jmx_url_template)
    clusters[0] = c
    return replace(cfg, clusters=tuple(clusters), listen_port=cfg.listen_port if port is None else port,
                   listen_address=address or cfg.listen_address)


def _resolved(flag: str, values) -> list[str]:
    from monitor.settings.secrets import SecretError, resolve_string
    from monitor.settings.valuecheck import resolved_url_problem

    try:
        out = [resolve_string(v) for v in values]
    except SecretError as exc:
        raise ConfigError(flag, str(exc)) from None
    for written, value in zip(values, out):
        if (why := resolved_url_problem(written, value)) is not None:
            raise ConfigError(flag, why)
    return out



def _node_id(log_dirs) -> str | None:
    """The broker's node.id (broker.id in v0) from the meta.properties of the log dirs found under the
    paths (``monitor.kafka.discovery``), when they name one broker; with several, the collector reads
    each under its own (``collectors.logdirs.paths.split_by_broker``)."""
    from monitor.kafka.discovery import LogDirNotFound, discover_log_dirs

    nodes = set()
    for d in log_dirs:
        try:
            nodes.update(f.node_id for f in discover_log_dirs(d).log_dirs if f.node_id and f.problem is None)
        except LogDirNotFound:
            continue
    return next(iter(nodes)) if len(nodes) == 1 else None


def _broker_id_from_url(url: str, i: int) -> str:
    from urllib.parse import urlparse

    try:  # checked as written (monitor.settings.valuecheck); a resolved password may still hold a "/" or "["
        u = urlparse(url)
        return f"{u.hostname}:{u.port}" if u.port else (u.hostname or str(i))
    except ValueError:
        return str(i)
