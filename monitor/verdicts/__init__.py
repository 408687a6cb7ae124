"""Our verdicts on what the model computes: each partition's one cause with its evidence and fix
(``causes``), which partitions are unhealthy (``health``), the review of topic configs
(``configreview``), how close an audit's prediction came (``accuracy``) and how long a store takes to
restore (``restore``).

May import: every other layer of the core (``monitor.fileio``, ``monitor.kafka``, ``monitor.model``,
``monitor.settings``, ``monitor.contract``) and this layer. Nothing in the core imports it.
"""
