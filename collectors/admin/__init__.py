"""The admin-API source: what a broker tells a client over Kafka's protocol (topic configs, leaders, replicas
and the ISR, log-end offsets, consumer groups' positions, broker settings). ``client`` is the one
confluent-kafka session with its errors (``errors``) and librdkafka's log (``clientlog``); ``topics`` and
``groups`` fetch; ``state`` holds the snapshot; ``replicas`` tracks how long a replica has been out of the
ISR; ``source`` is what the runner refreshes.

May import: the core, ``boundedhttp`` and ``collectors.serving``; not the other source rooms (``logdirs``,
``jmx``) nor ``export``."""
