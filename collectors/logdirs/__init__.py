"""The log-dir source: what a broker's files say that Kafka does not export (per-partition dirty ratios,
tombstones, open transactions), read with the core's format and model. ``paths`` and ``brokers`` find the
brokers' log dirs; ``scanner`` refreshes them, ``read`` reads a partition within the I/O budget, ``churn``
and ``detail`` keep what changed and the per-key detail, ``snapshot`` is what a refresh hands on,
``summary_state`` the cache a restart trusts; ``cleaner_log`` follows the broker's ``log-cleaner.log``.

May import: the core and ``collectors.serving``; not the other source rooms (``admin``, ``jmx``) nor ``export``."""
