"""What the record sources (``kafka-segments``, ``kafka-dumps``) share: the record schema, whole files
per task, listed on the driver (names and sizes) and opened on the executors."""

from __future__ import annotations

import json
from dataclasses import dataclass

from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

from spark_analysis.schema import DDL

DEFAULT_TARGET_BYTES = 128 * 1024 * 1024


@dataclass
class FilesPartition(InputPartition):
    files: list  # [(uri, size, active)]

    def __init__(self, files):
        self.files = files


def may_be_appended(files: list[tuple[str, int]]) -> set[str]:
    """The files a broker may be appending to as they are read: each folder's segment with the highest
    base offset (its partition's active segment, when the folder is a live log dir or a copy of one) and
    any file not named as a segment (given alone, it may be). A batch cut short at the end of one of these
    is the append under way, not damage: the one cut-tail rule, ``reader.cut_tail_is_fault``."""
    from spark_analysis.arrow_rows import segment_base

    last: dict[str, tuple[int, str]] = {}
    out = set()
    for uri, _ in files:
        base = segment_base(uri)
        if base is None:
            out.add(uri)
            continue
        folder = uri.rsplit("/", 1)[0]
        if folder not in last or base > last[folder][0]:
            last[folder] = (base, uri)
    return out | {uri for _, uri in last.values()}


def plan(files: list[tuple[str, int]], target: int) -> list[FilesPartition]:
    """Whole files per task; consecutive small files grouped up to ``target`` bytes; each with whether
    it may be being appended to (``may_be_appended``: the listing is whole only here, on the driver)."""
    active = may_be_appended(files)
    parts, current, size = [], [], 0
    for uri, n in files:
        if current and size + n > target:
            parts.append(FilesPartition(current))
            current, size = [], 0
        current.append((uri, n, uri in active))
        size += n
    if current:
        parts.append(FilesPartition(current))
    return parts


class FilesReader(DataSourceReader):
    """Lists ``path`` / ``paths`` (a JSON list) or takes ``files`` (a JSON listing made once by the
    caller); ``targetBytes`` groups small files per task."""

    def __init__(self, options: dict, suffix: tuple[str, ...], batches: str):
        self.options, self.suffix, self.batches_name = options, suffix, batches

    def _files(self) -> list[tuple[str, int]]:
        from spark_analysis.fs import list_files

        if "files" in self.options:
            return [tuple(x) for x in json.loads(self.options["files"])]
        out = []
        for p in self._paths():
            out += list_files(p, self.suffix)
        return out

    def _paths(self) -> list[str]:
        paths = self.options.get("paths")
        if paths:
            return json.loads(paths)
        return [self.options["path"]]

    def read(self, partition: FilesPartition):
        from spark_analysis import arrow_rows
        from spark_analysis.fs import open_input

        batches = getattr(arrow_rows, self.batches_name)
        for uri, size, active in partition.files:
            yield from batches(uri, size, open_input, active)

    def partitions(self):
        files = self._files()
        if not files:
            raise FileNotFoundError(f"no {'/'.join(self.suffix)} files under {', '.join(self._paths())}")
        return plan(files, int(self.options.get("targetBytes", DEFAULT_TARGET_BYTES)))


class RecordsDataSource(DataSource):
    """A source of records (``schema.DDL``): files ending with ``suffix``, each read by the function
    of ``arrow_rows`` named ``batches`` (``(uri, size, opener, active)``)."""

    suffix: tuple[str, ...] = ()
    batches = ""

    def schema(self):
        return DDL

    def reader(self, schema):
        return FilesReader(self.options, self.suffix, self.batches)
