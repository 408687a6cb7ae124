"""Kafka compaction-health monitor, the pure core: the record and dump readers, log dirs and
checkpoints, the compaction model, topic configs and their one precedence, the monitor's config.

It imports no edge, no command line, no network client and starts no process
(``tests/test_layout.py``); the edges and the command line build on it.
"""
