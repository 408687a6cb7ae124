"""How long a state store takes to restore from its changelog: the topic's size after the next clean (the
audit's ``next_clean_bytes``, what the broker's cleaner leaves when it next cleans: the bytes a restoring
consumer then reads from offset 0 to the end) over a consumer throughput in bytes per second. The next
clean, not the settled size: the tombstones and markers it stamps stay for delete.retention.ms, and a
restore in that time reads them.

The throughput is stated, never guessed. Its precedence, defined here once: the audit's
``--restore-throughput`` flag > monitor.yaml's ``restore_throughput_bytes_per_second`` (a cluster's) >
the measurement ``./dev bench restore`` writes (a timed consume of a real topic on the local broker,
``bench/out/restore.json``) > unknown, with the reason: the estimate is then null, not a number.

A changelog's restore is the case users care about (Kafka Streams replays it before the task runs,
``StoreChangelogReader``); the estimate is given for every compacted topic, since any compacted topic
read from the start to rebuild a table (a cache, a CDC sink) restores the same way.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

# where ``./dev bench restore`` writes its figure: the checkout's bench/out/ (the checkout is as many folders
# above this file as its module name has dots, wherever in the package the module sits). Installed (a wheel
# in site-packages: no pyproject.toml, no bench/ beside the packages) there is no such file and no default.
_CHECKOUT = Path(__file__).resolve().parents[__name__.count(".")]
_IN_CHECKOUT = (_CHECKOUT / "pyproject.toml").is_file() and (_CHECKOUT / "bench" / "bench_restore.py").is_file()
MEASUREMENT: Path | None = _CHECKOUT / "bench" / "out" / "restore.json" if _IN_CHECKOUT else None


@dataclass(frozen=True)
class RestoreThroughput:
    bytes_per_second: float | None  # None: unknown (``reason`` says why)
    source: str  # "--restore-throughput", "monitor.yaml", "measured ..." or "unknown"
    reason: str | None = None

    def seconds(self, size_bytes: float) -> float | None:
        """``size_bytes`` / the throughput; None when the throughput is unknown."""
        return None if self.bytes_per_second is None else size_bytes / self.bytes_per_second

    def as_summary(self) -> dict:
        return {"restore_throughput_bytes_per_second": self.bytes_per_second,
                "restore_throughput_source": self.source, "restore_unknown_reason": self.reason}


class MeasurementError(ValueError):
    """The measurement file is there but unusable: named, with why."""


def _positive(value, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise ValueError(f"{what}: {value!r} is not a throughput (a finite number of bytes per second above 0)")
    return float(value)


def read_measurement(path: str | Path) -> RestoreThroughput | None:
    """The benchmark's file as a throughput; None when there is no file. A file that is not the
    benchmark's (not JSON, no positive ``bytes_per_second``) raises MeasurementError naming it."""
    path = Path(path)
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise MeasurementError(f"{path}: not a restore measurement ({exc})") from None
    if not isinstance(data, dict):
        raise MeasurementError(f"{path}: not a restore measurement (expected a JSON object)")
    try:
        bps = _positive(data.get("bytes_per_second"), f"{path}: bytes_per_second")
    except ValueError as exc:
        raise MeasurementError(str(exc)) from None
    where = data.get("bootstrap") or "?"
    return RestoreThroughput(bps, f"measured by ./dev bench restore at {data.get('measured_at', '?')} on {where} "
                                  f"(topic {data.get('topic', '?')}, {path})")


def resolve(flag: float | None = None, config: float | None = None,
            measurement: str | Path | None = MEASUREMENT) -> RestoreThroughput:
    """The throughput by the precedence above: flag > config file > measurement file > unknown."""
    if flag is not None:
        return RestoreThroughput(_positive(flag, "--restore-throughput"), "--restore-throughput")
    if config is not None:
        return RestoreThroughput(_positive(config, "restore_throughput_bytes_per_second"), "monitor.yaml")
    if measurement is not None:
        try:
            got = read_measurement(measurement)
        except MeasurementError as exc:
            return RestoreThroughput(None, "unknown", f"no --restore-throughput nor monitor.yaml's "
                                                      f"restore_throughput_bytes_per_second, and {exc}")
        if got is not None:
            return got
    where = (f"no measurement at {measurement} (run ./dev bench restore)" if measurement else
             "no measurement file (--restore-measurement: the file ./dev bench restore writes in a checkout)")
    return RestoreThroughput(None, "unknown", "no --restore-throughput, no restore_throughput_bytes_per_second in "
                                              f"monitor.yaml, {where}")


def restore_order(topics: list[dict]) -> list[dict]:
    """Topic rows as the report and the dashboard show them: Kafka Streams changelogs first (a state
    store's restore is what users wait on), then the other topics; the largest after the next clean first."""
    return sorted(topics, key=lambda t: (t.get("streams_role") != "changelog", -(t.get("next_clean_bytes") or 0),
                                         t.get("topic", "")))


EXPLAIN = ("Restore time: how long a consumer reading a topic from offset 0 to its end takes once the broker "
           "has cleaned it next (its size after the next clean over the restore throughput). For a Kafka Streams changelog this "
           "is the state store's restore before its task runs; other compacted topics restore the same way when "
           "a cache or table is rebuilt from them.")
