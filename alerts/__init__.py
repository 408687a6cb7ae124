"""Prometheus alert rules for the log cleaner and tombstones (rule files live beside this module)."""
