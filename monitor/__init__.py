"""Kafka compaction-health monitor: the pure core (format reader, compaction model, configuration)."""
