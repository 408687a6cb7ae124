"""The JMX source: the broker's log-cleaner gauges from its JMX exporter page or Jolokia (``gauges``),
the page as a source with its credentials (``pages``), and a page per broker found at run time from the
cluster's ``jmx_url_template`` (``template``).

May import: the core, ``boundedhttp`` and ``collectors.serving``; not the other source rooms (``admin``,
``logdirs``) nor ``export``."""
