"""The exporter's broker area: each broker's cleaner gauges (JMX exporter / Jolokia), its log cleaner
settings (admin API) and what its log-cleaner.log says. Each collector only maps the refresh's facts
(``collectors.export.facts``) to metric families (``collectors.export.metrics`` declares them)."""

from __future__ import annotations

from collectors.export import metrics as M
from collectors.export.view import StoreCollector, families, message_label
from collectors.export.facts import ADMIN, CLEANER_LOG, GAUGES, Facts


class BrokerCleanerCollector(StoreCollector):
    """The cleaner's gauges of every broker whose JMX or Jolokia source answered."""

    names = (M.BROKER_DIRTY_RATIO, M.BROKER_SINCE_LAST_RUN, M.BROKER_CLEAN_TIME, M.BROKER_BUFFER, M.BROKER_RECOPY,
             M.BROKER_DELAY, M.BROKER_DEAD, M.BROKER_UNCLEANABLE_PARTS, M.BROKER_UNCLEANABLE_BYTES,
             M.BROKER_CLEANER_IO)

    def _collect(self, facts: Facts):
        fams = families(self.names)
        for st in facts.of_kind(*GAUGES):
            g = st.snapshot
            lb = [st.cluster, st.broker or ""]
            for name, value in ((M.BROKER_DIRTY_RATIO, g.dirty_ratio()),
                                (M.BROKER_SINCE_LAST_RUN, g.time_since_last_run_seconds()),
                                (M.BROKER_CLEAN_TIME, g.max_clean_time_seconds()),
                                (M.BROKER_BUFFER, g.buffer_utilization_ratio()),
                                (M.BROKER_RECOPY, g.recopy_ratio()),
                                (M.BROKER_DELAY, g.compaction_delay_seconds()),
                                (M.BROKER_DEAD, g.dead_threads()),
                                (M.BROKER_CLEANER_IO, g.cleaner_io_bytes())):
                if value is not None:
                    fams[name].add_metric(lb, value)
            for d, v in g.per_log_dir.get("uncleanable_partitions_count", {}).items():
                fams[M.BROKER_UNCLEANABLE_PARTS].add_metric(lb + [d], v)
            for d, v in g.per_log_dir.get("uncleanable_bytes", {}).items():
                fams[M.BROKER_UNCLEANABLE_BYTES].add_metric(lb + [d], v)
        yield from fams.values()


class BrokerSettingsCollector(StoreCollector):
    """The brokers' log cleaner settings from the admin source's latest snapshot, one series per
    broker and setting known (see ``metrics``: an unknown setting has no sample)."""

    names = (M.BROKER_CLEANER_ENABLED, M.BROKER_CLEANER_THREADS, M.BROKER_CLEANER_DEDUPE, M.BROKER_CLEANER_LOAD,
             M.BROKER_CLEANER_IO_MAX, M.BROKER_CLEANER_BACKOFF, M.BROKER_CLEANER_KNOWN)
    SETTINGS = {"log.cleaner.enable": (M.BROKER_CLEANER_ENABLED, float),
                "log.cleaner.threads": (M.BROKER_CLEANER_THREADS, float),
                "log.cleaner.dedupe.buffer.size": (M.BROKER_CLEANER_DEDUPE, float),
                "log.cleaner.io.buffer.load.factor": (M.BROKER_CLEANER_LOAD, float),
                "log.cleaner.io.max.bytes.per.second": (M.BROKER_CLEANER_IO_MAX, float),
                "log.cleaner.backoff.ms": (M.BROKER_CLEANER_BACKOFF, lambda ms: ms / 1000.0)}

    def _collect(self, facts: Facts):
        fams = families(self.names)
        for st in facts.of_kind(ADMIN):
            for broker, settings in sorted(st.snapshot.cleaner_settings.items()):
                lb = [st.cluster, broker]
                refused = next((s.reason for s in settings.values() if s.source == "unknown"), None)
                fams[M.BROKER_CLEANER_KNOWN].add_metric(lb + [message_label(refused)],
                                                        0.0 if refused else 1.0)
                for key, (name, conv) in self.SETTINGS.items():
                    s = settings.get(key)
                    if s is not None and s.known:
                        fams[name].add_metric(lb + [s.source], conv(s.value))
        yield from fams.values()


class CleanerLogCollector(StoreCollector):
    """What the followed log-cleaner.log says: uncleanable partitions and why, dead threads, cleans."""

    names = (M.P_UNCLEANABLE, M.CL_THREAD_DEATHS, M.CL_LAST_ERROR, M.CL_CLEANS, M.CL_PROCESSED,
             M.CL_LAST_THROUGHPUT, M.CL_LAST_BUFFER, M.CL_LAST_REDUCTION, M.CL_LEARNED)

    def _collect(self, facts: Facts):
        fams = families(self.names)
        for st in facts.of_kind(CLEANER_LOG):
            s = st.snapshot.state
            lb = [st.cluster, st.broker or ""]
            for (topic, partition), u in sorted(s.uncleanable.items()):
                fams[M.P_UNCLEANABLE].add_metric(lb + [topic, str(partition), u.exception], 1.0)
            fams[M.CL_THREAD_DEATHS].add_metric(lb, s.thread_deaths_total)
            d = s.last_thread_death
            if d is not None:
                fams[M.CL_LAST_ERROR].add_metric(lb + [d.thread, d.exception, message_label(d.error)], 1.0)
            fams[M.CL_CLEANS].add_metric(lb, s.cleans_total)
            fams[M.CL_PROCESSED].add_metric(lb, s.processed_bytes_total)
            c = s.last_clean
            if c is not None:
                if c.mb_per_sec == c.mb_per_sec and c.mb_per_sec != float("inf"):  # Kafka prints NaN/Infinity at 0 s
                    fams[M.CL_LAST_THROUGHPUT].add_metric(lb, c.throughput_bytes_per_second)
                if c.buffer_utilization is not None:
                    fams[M.CL_LAST_BUFFER].add_metric(lb, c.buffer_utilization)
                if c.size_reduction is not None and c.size_reduction == c.size_reduction:
                    fams[M.CL_LAST_REDUCTION].add_metric(lb, c.size_reduction)
            learned = s.learned_throughput()
            if learned is not None:
                fams[M.CL_LEARNED].add_metric(lb, learned)
        yield from fams.values()
