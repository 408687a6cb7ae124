"""The exporter's own area: each source's health (up, last success, refresh duration, errors by kind,
the last error) and which shape a JMX page was read as. Mapped from the statuses the refresh's facts
were built from (``collectors.export.facts``), so the page's health and its figures are of the same refresh."""

from __future__ import annotations

from collectors.export import metrics as M
from collectors.export.view import StoreCollector, families, message_label
from collectors.export.facts import GAUGES, Facts


class SelfCollector(StoreCollector):
    names = (M.SRC_UP, M.SRC_LAST_SUCCESS, M.SRC_DURATION, M.SRC_ERRORS, M.SRC_SHAPE, M.SRC_LAST_ERROR)

    def _collect(self, facts: Facts):
        fams = families(self.names)
        for st in facts.statuses:
            lb = [st.cluster, st.name, st.kind]
            fams[M.SRC_UP].add_metric(lb, 1.0 if st.up else 0.0)
            if st.last_success is not None:
                fams[M.SRC_LAST_SUCCESS].add_metric(lb, st.last_success)
            if st.last_duration is not None:
                fams[M.SRC_DURATION].add_metric(lb, st.last_duration)
            for kind, n in sorted(st.errors.items()):
                fams[M.SRC_ERRORS].add_metric(lb + [kind], n)
            if st.last_error_kind is not None:  # the store redacted the text
                fams[M.SRC_LAST_ERROR].add_metric(
                    lb + [st.last_error_kind, message_label(st.last_error_message)], 1.0)
            shape = getattr(st.snapshot, "shape", None) if st.kind in GAUGES else None
            if shape:
                fams[M.SRC_SHAPE].add_metric(lb + [shape, ",".join(st.snapshot.also_on_page)], 1.0)
        yield from fams.values()
