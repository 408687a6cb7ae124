"""The exporter's topics area: each compacted topic's live config, partitions, leaders' LSOs and
replicas from the admin source, and the configuration review's findings (``monitor.verdicts.configreview``).
Each collector only maps the refresh's facts (``collectors.export.facts``) to metric families."""

from __future__ import annotations

from collectors.export import metrics as M
from collectors.export.view import StoreCollector, families, family
from collectors.export.facts import ADMIN, Facts
from monitor.model.topicconfig import LONG_MAX


class TopicCollector(StoreCollector):
    names = (M.T_MIN_RATIO, M.T_RETENTION, M.T_MIN_LAG, M.T_MAX_LAG, M.T_SEGMENT_BYTES, M.T_SEGMENT_SECONDS,
             M.T_PARTITIONS, M.P_LEADER_LSO, M.ADMIN_LISTED, M.P_REPLICA_INFO, M.T_ADMIN_UNKNOWN)

    def _collect(self, facts: Facts):
        fams = families(self.names)
        for st in facts.of_kind(ADMIN):
            fams[M.ADMIN_LISTED].add_metric([st.cluster], len(st.snapshot.listed))
            for t, (call, reason) in sorted(getattr(st.snapshot, "unknown", {}).items()):
                fams[M.T_ADMIN_UNKNOWN].add_metric([st.cluster, t, call, reason], 1.0)
            for t, info in st.snapshot.topics.items():
                lb = [st.cluster, t]
                c = info.config
                fams[M.T_MIN_RATIO].add_metric(lb, c.min_cleanable_dirty_ratio)
                fams[M.T_RETENTION].add_metric(lb, c.delete_retention_ms / 1000.0)
                fams[M.T_MIN_LAG].add_metric(lb, c.min_compaction_lag_ms / 1000.0)
                # Kafka's default (Long.MAX_VALUE) means "no maximum": +Inf
                fams[M.T_MAX_LAG].add_metric(lb, float("inf") if c.max_compaction_lag_ms >= LONG_MAX
                                             else c.max_compaction_lag_ms / 1000.0)
                fams[M.T_SEGMENT_BYTES].add_metric(lb, c.segment_bytes)
                fams[M.T_SEGMENT_SECONDS].add_metric(lb, c.segment_ms / 1000.0)
                fams[M.T_PARTITIONS].add_metric(lb, len(info.partitions))
                for p, po in sorted(info.partitions.items()):
                    # granularity topic: only where the leader's LSO tells more than its log end (a
                    # transaction open on the leader); this collector may not read that replica's log dir
                    if po.stable >= 0 and (self.view.keep_all or po.stable < po.latest):
                        fams[M.P_LEADER_LSO].add_metric([st.cluster, str(po.leader), t, str(p)], po.stable)
                    for b in po.replicas:
                        fams[M.P_REPLICA_INFO].add_metric(
                            [st.cluster, str(b), t, str(p), "leader" if b == po.leader else "follower"], 1)
        yield from fams.values()


class ConfigReviewCollector(StoreCollector):
    """The configuration review's findings (``monitor.verdicts.configreview``) per cluster with an admin source."""

    names = (M.T_CONFIG_FINDING, M.T_CONFIG_NOT_RUN)

    def _collect(self, facts: Facts):
        from collectors.export.review import topic_facts
        from monitor.verdicts.configreview import review

        fam, not_run = family(M.T_CONFIG_FINDING), family(M.T_CONFIG_NOT_RUN)
        for cluster in sorted({st.cluster for st in facts.of_kind(ADMIN)}):
            r = review(topic_facts(facts, cluster))
            for f in r.findings:
                fam.add_metric([cluster, f.topic, f.check, f.setting, f.current, f.suggested], 1.0)
            for n in r.not_run:  # never a pass unsaid: the page and the rules see what was not checked
                for topic in n["topics"]:
                    not_run.add_metric([cluster, topic, n["check"], n["needs"]], 1.0)
        yield fam
        yield not_run
