"""Export: the sources' snapshots joined (``facts``, ``review``) and turned into Prometheus families at scrape
time (``exporter`` and its area collectors ``broker``, ``partitions``, ``groups``, ``topics``, ``replicas``,
``own``, over ``view``), the metric registry (``metrics``, with ``metricsdoc`` for the reference page) and
the rendered page in both wire formats (``exposition``, ``encoding``; a partition's series kept as their lines
from one render to the next: ``lines``).

May import: the core, ``collectors.serving`` and the source rooms (``admin``, ``logdirs``, ``jmx``), whose
snapshots it reads; no source imports it."""
