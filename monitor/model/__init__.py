"""Kafka's behaviour, computed the way Kafka does: the compaction model (``compaction``, from segment
summaries, ``summary``), transactions and the last stable offset, the ``.txnindex`` cross-check,
retention, the cleaner's I/O against its throttle, its duration and disk needs, consumers that may miss
updates, topic configs and their one precedence, Kafka Streams' topic names.

The model states the comparisons Kafka makes (``comparison``: Kafka's test for picking a log to clean);
the rule table refers to them, never the reverse. So the model knows nothing of the alerts, the panels
or ``monitor.yaml``: a figure here is Kafka's, whatever the monitor is configured to call unhealthy.

May import: ``monitor.fileio``, ``monitor.kafka`` and this layer; never ``monitor.settings`` nor the
rule table (``tests/test_layout.py``).
"""
