"""Topic configs that govern compaction, with Kafka's defaults (LogConfig / CleanerConfig).

Values arrive as strings (describe_configs, a YAML file, CLI flags); ``TopicConfig.from_strings``
turns them into numbers with a clear error naming the config key.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

LONG_MAX = 9223372036854775807

# Kafka defaults (LogConfig.java, CleanerConfig.java)
DEFAULTS = {
    "cleanup.policy": "delete",
    "min.cleanable.dirty.ratio": 0.5,
    "min.compaction.lag.ms": 0,
    "max.compaction.lag.ms": LONG_MAX,
    "delete.retention.ms": 86_400_000,
    "segment.bytes": 1_073_741_824,
    "segment.ms": 604_800_000,
}
BROKER_DEFAULTS = {  # broker-only cleaner settings
    "log.cleaner.threads": 1,
    "log.cleaner.dedupe.buffer.size": 134_217_728,
    "log.cleaner.io.buffer.load.factor": 0.9,
    "log.cleaner.io.max.bytes.per.second": float("inf"),
    "log.cleaner.backoff.ms": 15_000,
}


class ConfigValueError(ValueError):
    def __init__(self, key: str, value, reason: str):
        self.key = key
        super().__init__(f"{key}={value!r}: {reason}")


@dataclass(frozen=True)
class TopicConfig:
    cleanup_policy: tuple[str, ...] = ("delete",)
    min_cleanable_dirty_ratio: float = 0.5
    min_compaction_lag_ms: int = 0
    max_compaction_lag_ms: int = LONG_MAX
    delete_retention_ms: int = 86_400_000
    segment_bytes: int = 1_073_741_824
    segment_ms: int = 604_800_000

    @property
    def compacted(self) -> bool:
        return "compact" in self.cleanup_policy

    @classmethod
    def from_strings(cls, values: dict[str, object] | None) -> "TopicConfig":
        """Kafka config names (``min.cleanable.dirty.ratio``...) to a TopicConfig; unknown keys ignored."""
        values = dict(values or {})
        kw: dict[str, object] = {}
        for f in fields(cls):
            key = f.name.replace("_", ".")
            if key not in values or values[key] is None:
                continue
            raw = values[key]
            if f.name == "cleanup_policy":
                items = raw if isinstance(raw, (list, tuple)) else str(raw).split(",")
                kw[f.name] = tuple(p.strip().lower() for p in items if p.strip())
                continue
            try:
                num = float(raw) if f.name == "min_cleanable_dirty_ratio" else int(str(raw).strip())
            except ValueError:
                raise ConfigValueError(key, raw, "not a number") from None
            if f.name == "min_cleanable_dirty_ratio" and not 0 <= num <= 1:
                raise ConfigValueError(key, raw, "must be between 0 and 1")
            if f.name != "min_cleanable_dirty_ratio" and num < 0:
                raise ConfigValueError(key, raw, "must not be negative")
            kw[f.name] = num
        return cls(**kw)

    def to_strings(self) -> dict[str, str]:
        out = {}
        for f in fields(self):
            v = getattr(self, f.name)
            out[f.name.replace("_", ".")] = ",".join(v) if isinstance(v, tuple) else str(v)
        return out
