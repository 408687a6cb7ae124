"""Collectors: fetch compaction facts (JMX exporter / Jolokia pages, log dirs, the admin API)
and expose them to Prometheus. Fetchers return frozen snapshots with per-source errors;
exposers are ``prometheus_client`` custom collectors that build families at scrape time."""
