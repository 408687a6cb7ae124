"""Collectors: fetch compaction facts (JMX exporter / Jolokia pages, log dirs, the admin API)
and expose them to Prometheus. Fetchers return frozen snapshots with per-source errors;
exposers are ``prometheus_client`` custom collectors that build families at scrape time.

In rooms, bottom up (the order is stated once, in tests/test_layout.py's ``COLLECTOR_ROOMS``):
``serving`` (threads, the store, HTTP); the three sources side by side, blind to each other:
``admin`` (the admin API), ``logdirs`` (the broker's files), ``jmx`` (the cleaner's gauges);
``export`` (the joins and the page). ``app`` wires a config into them."""
