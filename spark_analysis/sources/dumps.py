"""``kafka-dumps``: one row per record of ``kafka-dump-log --print-data-log`` text files (``*.txt``,
``*.dump``, ``*.out``), in the record schema (``schema``); a line not understood is a fault row.
The audit's records path folds these rows per partition (``audit.records``)."""

from __future__ import annotations

from spark_analysis.sources.files import RecordsDataSource


class KafkaDumpsDataSource(RecordsDataSource):
    suffix = (".txt", ".dump", ".out")
    batches = "dump_batches"

    @classmethod
    def name(cls):
        return "kafka-dumps"
