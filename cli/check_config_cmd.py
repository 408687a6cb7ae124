"""``topics lint`` (``check-config`` in 0.1.0): every compacted topic's live settings against the pitfalls
of ``monitor.verdicts.configreview``,
from one refresh of the first cluster's sources, reviewed from the same facts the collector's
``topic_config_finding`` series are (``collectors.export.review.topic_facts``)."""

from __future__ import annotations

import sys
import time
from dataclasses import replace

from cli.clusterreach import UNREACHED_EXIT, unreached_source
from monitor.fileio import strictjson
from monitor.verdicts.configreview import format_review, review
from monitor.contract.sourcekinds import ADMIN


def run_check_config(config, *, fmt: str = "text", topics=(), out=sys.stdout, err=sys.stderr) -> int:
    """``topics lint``: one refresh of the first cluster's sources (the admin API for the live configs
    and consumer groups, the log dirs given for write rates, tombstones and active segments), then the
    review (``monitor.verdicts.configreview``). 0: every check ran on every topic and passed; 1: a pitfall
    found, a check not run (its input not given: the output names it and the input it needs; "nothing
    found" is then no pass), or the cluster out of reach (one line: ``cli.clusterreach``); 2: no live
    configs, or a --log-dir that yields no log dir."""
    from collectors.app import build
    from collectors.export.facts import from_statuses
    from collectors.export.review import topic_facts

    cluster = config.clusters[0] if config.clusters else None
    if cluster is None or not cluster.bootstrap_servers:
        print("topics lint: no bootstrap server: the live topic configs come from the admin API", file=err)
        return 2
    col = build(replace(config, clusters=(cluster,)))
    try:
        col.runner.refresh_all()
        col.second_sample()  # a group's lag its record cannot date: from the log end's progress
        if (unreached := unreached_source(col.store.statuses())) is not None:
            print(f"topics lint: {unreached}", file=err)  # the one line; the other sources' follow from it
            return UNREACHED_EXIT
        for st in col.store.statuses():
            if not st.up:
                print(f"topics lint: source {st.name} failed: {st.last_error}", file=err)
        statuses = col.store.statuses()
        # a --log-dir that yields no log dir (monitor.kafka.discovery; its scanner logged why): a usage error
        wrong = any(getattr(st.snapshot, "unresolved", None) for st in statuses)
        if wrong or not any(st.kind == ADMIN and st.snapshot is not None for st in statuses):
            return 2
        facts = topic_facts(from_statuses(statuses, time.time()), cluster.name)
    finally:
        col.close()
    if topics:
        missing = sorted(set(topics) - {f.topic for f in facts})
        for t in missing:
            print(f"topics lint: {t}: no such compacted topic on {cluster.bootstrap_servers}", file=err)
        facts = [f for f in facts if f.topic in topics]
        if missing:
            return 2
    result = review(facts, bootstrap=cluster.bootstrap_servers)
    if fmt == "json":
        strictjson.dump(result.as_dict(), out, indent=2, default=str)
        out.write("\n")
    else:
        out.write(format_review(result) + "\n")
    return 0 if result.passed else 1  # a check not run is no pass (result.passed)
