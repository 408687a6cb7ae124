"""The exporter's replica-safety area: each replica of a compacted partition out of the ISR, how long, and
that against its limits (``monitor.model.replicasafety.assess``), from the admin source's snapshot (its
``out_of_sync``, tracked across refreshes by ``collectors.admin.replicas``)."""

from __future__ import annotations

from collectors.export import metrics as M
from collectors.export.view import StoreCollector, families
from collectors.export.facts import ADMIN, Facts
from monitor.model.replicasafety import assess


class ReplicaSafetyCollector(StoreCollector):
    names = (M.P_REPLICA_OUT_SECONDS, M.P_REPLICA_OUT_RATIO, M.P_REPLICA_OUT_PID_RATIO)

    def _collect(self, facts: Facts):
        fams = families(self.names)
        now = facts.now  # the page's one reading of the clock
        for st in facts.of_kind(ADMIN):
            snap = st.snapshot
            pid = getattr(snap, "producer_id_expiration_ms", {})
            for (topic, p, b), out in sorted(getattr(snap, "out_of_sync", {}).items()):
                info = snap.topics.get(topic)
                if info is None:
                    continue
                r = assess(max(0.0, now - out.since), info.config.delete_retention_ms, pid.get(b),
                           lower_bound=out.lower_bound, offline=out.offline)
                lb = [st.cluster, str(b), topic, str(p), str(r.lower_bound).lower(), str(r.offline).lower()]
                fams[M.P_REPLICA_OUT_SECONDS].add_metric(lb, r.seconds)
                fams[M.P_REPLICA_OUT_RATIO].add_metric(lb, r.ratio)
                if r.producer_expiration_seconds:
                    fams[M.P_REPLICA_OUT_PID_RATIO].add_metric(lb, r.seconds / r.producer_expiration_seconds)
        yield from fams.values()
