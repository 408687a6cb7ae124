"""Kafka's files and formats, read strictly: record batches (``record``), ``kafka-dump-log`` text
(``dump``, ``sniff``), log dirs and Kafka's names in them (``logdir``, ``kafkanames``), offset checkpoints,
producer-state snapshots, ``__consumer_offsets`` on disk (``offsetgroups``), a segment's totals
(``segmentstats``) and the broker's ``log-cleaner.log``, with the one memory bound on what a length in a
file may make a reader hold (``readbound``).

What is here is what Kafka wrote, as Kafka wrote it; what Kafka then does with it (the cleaner's choices,
transactions, retention) is the model's (``monitor.model``). A bad file is an error naming the file and
the byte position.

May import: ``monitor.fileio`` and this layer.
"""
