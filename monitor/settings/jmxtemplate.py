"""A JMX exporter URL template (``collect --jmx-url-template``, ``jmx_url_template`` of a cluster in
``monitor.yaml``): one URL per broker, its ``{node_id}`` filled with each broker the log-dir discovery finds.

Why: a broker-role collector that finds its brokers at run time (a DaemonSet reading the kubelet's pod
volumes: ``monitor.kafka.discovery`` maps each log dir to its broker by meta.properties) cannot list their
JMX pages in advance, yet a partition's cause weighs the broker's cleaner gauges (``cleaner_dead``,
``throttled_cleaner``) only when the same collector reads them. Operators name their broker pods by
node id (Strimzi: ``<cluster>-<pool>-<node id>`` under the headless Service ``<cluster>-kafka-brokers``),
so one template gives every broker's page.

Only ``{node_id}``: a template without it would give every broker the same page (each broker's gauges
labelled with another's), and another ``{name}`` has nothing to be filled with; both are errors. A
``${provider:...}`` secret reference (a password in the URL's user part) is no placeholder: it stays for
``monitor.settings.secrets`` to resolve.
"""

from __future__ import annotations

import re

PLACEHOLDER = "{node_id}"
# a {...} that is not the body of a ${provider:...} secret reference
_FIELD = re.compile(r"(?<!\$)\{([^{}]*)\}")
SHAPE = f"an http:// or https:// URL with {PLACEHOLDER} where each broker's node.id goes"


def template_problem(value) -> str | None:
    """Why ``value`` is no JMX URL template (the flag's and the key's one check), or None."""
    from monitor.settings.valuecheck import shown, url_problem

    if not isinstance(value, str):
        return f"expected {SHAPE}, got {shown(value)}"
    others = sorted({m.group(0) for m in _FIELD.finditer(value)} - {PLACEHOLDER})
    if others:
        return (f"expected {SHAPE}, got {shown(value)} (it has {', '.join(others)}: only {PLACEHOLDER} is "
                "filled in)")
    if PLACEHOLDER not in value:
        return (f"expected {SHAPE}, got {shown(value)} (no {PLACEHOLDER}: every broker would read the same "
                "page)")
    why = url_problem(expand(value, "0"))
    return None if why is None else f"{why} (with {PLACEHOLDER} filled as 0)"


def expand(template: str, node_id: str) -> str:
    """The JMX URL of broker ``node_id`` (its ``${...}`` references left as they are)."""
    return template.replace(PLACEHOLDER, str(node_id))


def template_problems(config) -> list[tuple[str, str]]:
    """A template that has nothing to be filled from, as ``(key path, reason)``: a cluster with
    ``jmx_url_template`` and no broker with log dirs (their meta.properties give the node ids)."""
    found = []
    for i, c in enumerate(config.clusters):
        if not getattr(c, "jmx_url_template", None):
            continue
        if config.role == "cluster":
            found.append((f"clusters[{i}].jmx_url_template", "(--jmx-url-template) the cluster role reads no "
                          "broker's JMX page: run it in the broker role (or all), or leave it out"))
        elif not any(b.log_dirs for b in c.brokers):
            found.append((f"clusters[{i}].jmx_url_template",
                          "(--jmx-url-template) fills {node_id} with the brokers found in the log dirs: give "
                          "--log-dir (or log_dirs of a broker in the file)"))
    return found
