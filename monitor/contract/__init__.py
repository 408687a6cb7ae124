"""What the edges share, defined once so that they cannot disagree: the alert rule table (``rules``) and
its Python evaluator with Prometheus' templates (``rule_eval``, ``gotemplate``), the charts (``panels``),
the layout of an audit run's folder (``auditrun``) and the value-size buckets of the audit's rows
(``valuesizes``), and how figures read for people: bytes, durations, rates, yes/no (``units``).

May import: ``monitor.fileio``, ``monitor.kafka``, ``monitor.model``, ``monitor.settings`` (the
thresholds) and this layer.
"""
