"""``inspect --stats``: totals per segment file, per partition and in all, as text or JSON lines.

Presentation over ``monitor.kafka.segmentstats.Totals`` (the fold). A file is the segment a batch came
from (for dump text, the file its ``Dumping`` section names); its partition is read from its folder's
name as Kafka names partition folders (``topic-N``); a file outside such a folder has no partition row
and counts only in the total. Times are printed as Kafka stores them (ms since the epoch) and, in the
text, also as UTC, and sizes also as people read them (``monitor.contract.units``).
"""

from __future__ import annotations

from pathlib import Path

from monitor.kafka.logdir import parse_partition_dir_name
from monitor.kafka.record.arrays import RecordArrays
from monitor.kafka.segmentstats import Totals
from monitor.contract.units import bytes_iec, timestamp_utc
from monitor.fileio import strictjson


class StatsCollector:
    """Totals per file, in the order files were met."""

    def __init__(self):
        self.files: dict[str, Totals] = {}

    def _file(self, name: str) -> Totals:
        t = self.files.get(name)
        if t is None:
            t = self.files[name] = Totals(files=1)
        return t

    def add(self, batch, data) -> None:
        """One batch with its ``RecordArrays`` (a segment) or its records (dump text)."""
        t = self._file(batch.file)
        if isinstance(data, RecordArrays):
            t.add_arrays(batch, data)
        else:
            t.add_records(batch, data)

    def end_of_input(self, name: str, batches: int, skipped: int) -> None:
        """After each input file: its corrupt batches, and a file with no valid batch (empty, or all
        corrupt) still gets its row. (A dump text's batches are under the segments it names.)"""
        if skipped or not batches:
            self._file(name).batches_skipped += skipped

    def partitions(self) -> dict[tuple[str, int], Totals]:
        out: dict[tuple[str, int], Totals] = {}
        for name, t in self.files.items():
            tp = partition_of(name)
            if tp is not None:
                out.setdefault(tp, Totals()).merge(t)
        return out

    def total(self) -> Totals:
        all_ = Totals()
        for t in self.files.values():
            all_.merge(t)
        return all_


def partition_of(name: str) -> tuple[str, int] | None:
    return parse_partition_dir_name(Path(name).parent.name)


# ---------------------------------------------------------------- JSON lines
def render_jsonl(c: StatsCollector) -> str:
    """One object per file, per partition and the total (``scope``), strict JSON."""
    lines = []
    for name, t in c.files.items():
        tp = partition_of(name)
        lines.append({"scope": "file", "file": name, "topic": tp and tp[0], "partition": tp and tp[1],
                      **t.as_dict()})
    for (topic, part), t in c.partitions().items():
        lines.append({"scope": "partition", "topic": topic, "partition": part, **t.as_dict()})
    lines.append({"scope": "total", **c.total().as_dict(offsets=False)})
    return "".join(strictjson.dumps(x) + "\n" for x in lines)


# ---------------------------------------------------------------- text
def _counts(d: dict) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(d.items())) or "-"


def _block(title: str, t: Totals, with_offsets: bool = True) -> list[str]:
    if t.first_offset is None:
        offsets = "unknown (no record)"
    else:
        offsets = f"{t.first_offset} .. {t.last_offset}"
    if t.next_offset is not None:
        offsets += f"  (next offset {t.next_offset})"
    if t.min_timestamp is None:
        times = "unknown (no record with a timestamp)"
    else:
        times = (f"{t.min_timestamp} .. {t.max_timestamp}  "
                 f"({timestamp_utc(t.min_timestamp)} .. {timestamp_utc(t.max_timestamp)})")
    return [
        title,
        f"  batches         {t.batches}  (control {t.control_batches}, transactional {t.transactional_batches}, "
        f"with delete horizon {t.delete_horizon_batches}, empty {t.empty_batches}, skipped as corrupt "
        f"{t.batches_skipped})",
        f"  records         {t.records}  (tombstones {t.tombstones}, keyless {t.keyless_records}, "
        f"control {t.control_records})",
        f"  bytes           {bytes_iec(t.bytes)}  ({t.bytes} B; keys {bytes_iec(t.key_bytes)}, values "
        f"{bytes_iec(t.value_bytes)})",
        *([f"  offsets         {offsets}"] if with_offsets else []),
        f"  timestamps      {times}",
        f"  compression     {_counts(t.compression)}",
        f"  magic           {_counts(t.magic)}",
        f"  timestamp type  {_counts(t.timestamp_type)}",
        f"  control records {_counts(t.control_types)}",
        f"  producer ids    {len(t.producer_ids)}",
    ]


def render_text(c: StatsCollector) -> str:
    lines: list[str] = []
    for name, t in c.files.items():
        tp = partition_of(name)
        lines += _block(f"file {name}" + (f"  (partition {tp[0]}-{tp[1]})" if tp else "  (not in a partition folder)"), t)
    parts = c.partitions()
    for (topic, part), t in parts.items():
        lines += _block(f"partition {topic}-{part}: {t.files} file(s)", t)
    total = c.total()
    lines += _block(f"total: {total.files} file(s), {len(parts)} partition(s)", total, with_offsets=False)
    return "\n".join(lines) + "\n"
