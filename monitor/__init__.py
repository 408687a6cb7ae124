"""Kafka compaction-health monitor, the pure core, in layers. Bottom up, each imports only the layers
below it (the order is stated and checked once, ``tests/test_layout.py`` ``LAYERS``):

* ``fileio``: files read and written safely (regular files only, excerpts of bad content, strict JSON);
* ``kafka``: Kafka's files and formats, read strictly (record batches, dumps, log dirs, checkpoints,
  producer snapshots, the cleaner's log);
* ``model``: Kafka's behaviour (the compaction model, transactions, retention, the cleaner's I/O,
  consumers, topic configs), with the comparisons Kafka makes;
* ``settings``: the monitor's own configuration (``monitor.yaml``, its schema, secrets, redaction);
* ``contract``: what the edges share (the rule table, the panels, an audit run's layout);
* ``verdicts``: our verdicts (each partition's cause, health, the config review, an audit's accuracy).

The core imports no edge, no command line, no network client and starts no process; the edges and the
command line build on it.
"""
