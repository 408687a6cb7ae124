"""The command line ``compaction-monitor``: the one composition root.

The only package that may import several edges (collectors, spark_analysis, alerts, the local
broker in ``localkafka``, the dashboard as a process); the core (``monitor``) and the edges never
import it. ``main`` holds the subcommands, ``demo`` the demo scenario, ``inspect_cmd`` the
``inspect`` printer. Run it as ``compaction-monitor ...`` or ``python -m cli ...``.
"""
