"""What the configuration review (``monitor.verdicts.configreview``) is given, gathered from a refresh's facts
(``collectors.export.facts``: the collector's store, or ``topics lint``'s one refresh): each compacted topic's
live config (the admin source), its consumer groups' time lags (the consumer-groups source) and, summed
over the partitions whose log dirs are read here, log and dirty bytes, tombstones, the write rate
(measured between refreshes, else the one-shot estimate from the dirty section) and the oldest active
segment. ``topics lint`` and the exporter's ``topic_config_finding`` both read it, so they cannot
disagree."""

from __future__ import annotations

from collectors.export.facts import ADMIN, GROUPS
from monitor.verdicts.configreview import GroupLagFact, TopicFacts


def topic_facts(facts, cluster: str) -> list[TopicFacts]:
    """Facts of every compacted topic the cluster's admin source knows (none without it), from the
    refresh's facts (``collectors.export.facts.Facts``)."""
    admin = groups = None
    for st in facts.of_kind(ADMIN, GROUPS):
        if st.cluster != cluster:
            continue
        if st.kind == ADMIN:
            admin = st.snapshot
        else:
            groups = st.snapshot
    reports = [f.report for ld in facts.log_dirs if ld.cluster == cluster for f in ld.partitions]
    return review_facts(admin, groups, reports, facts.now)


def review_facts(admin, groups, reports, now: float) -> list[TopicFacts]:
    """Facts of every compacted topic of ``admin`` (an ``AdminSnapshot``; None: no live config, no topic):
    its consumer groups' time lags from ``groups`` (a ``GroupSnapshot``; None: not read, so that check is
    not run) and, summed over ``reports`` (``PartitionReport`` of the partitions read here), what the log
    dirs tell. ``topic_facts`` (the collector, ``topics lint``) and ``explain`` both build it here."""
    if admin is None:
        return []
    now_ms = int(now * 1000)
    out = []
    for topic, info in sorted(admin.topics.items()):
        mine = [r for r in reports if r.state.topic == topic]
        kw = {}
        if mine:
            rates = [r.rate(now) for r in mine]  # the partitions' own rate (PartitionReport.rate)
            known = [x.bytes_per_second for x in rates if x.bytes_per_second is not None]
            ages = [now_ms - r.state.active_segment_first_timestamp for r in mine
                    if r.state.active_segment_bytes > 0 and r.state.active_segment_first_timestamp >= 0]
            kw = {"log_bytes": sum(r.state.log_bytes for r in mine),
                  "clean_bytes": sum(r.state.clean_bytes for r in mine),
                  "cleanable_bytes": sum(r.state.cleanable_bytes for r in mine),
                  "tombstones": sum(r.state.tombstones_clean + r.state.tombstones_dirty for r in mine),
                  # a partition without a batch timestamp in its dirty section has had no writes to measure
                  "write_bytes_per_second": sum(known) if known else 0.0,
                  "write_rate_basis": "; ".join(sorted({x.basis for x in rates}))[:300],
                  "active_segment_bytes": max(r.state.active_segment_bytes for r in mine),
                  "active_segment_age_ms": max(ages) if ages else None,
                  "max_decompressed_record_bytes": max(r.state.max_decompressed_record_bytes for r in mine),
                  "records_pending": any(r.detail_pending for r in mine)}
        lags = tuple(GroupLagFact(g.group, g.partition, g.lag_seconds) for g in (groups.lags if groups else ())
                     if g.topic == topic)
        out.append(TopicFacts(topic, info.config, group_lags=lags, groups_measured=groups is not None, **kw))
    return out
