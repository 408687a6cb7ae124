"""The value-size distribution of a partition or topic: a mergeable histogram and its percentiles.

Why a histogram of fixed buckets and not the sizes themselves: the audit folds a partition in
windows on an executor and a topic's partitions on different executors, so what each saw must add
up by summing counts per bucket (any order, any split), in a few rows per partition.

The buckets (one definition, used by the audit and by any later reader of its rows):
* exact below ``EXACT_BELOW`` bytes: one bucket per size, so small values (and the empty value, a
  size of 0) are counted exactly;
* from ``EXACT_BELOW`` on, logarithmic: bucket ``EXACT_BELOW + k`` holds sizes in
  about ``[EXACT_BELOW * GAMMA**k, EXACT_BELOW * GAMMA**(k+1))`` in whole bytes (``LOWER``); a percentile that falls there is given as
  the bucket's representative (``bucket_value``), within ``RELATIVE_ERROR`` (1%) of the true size (DDSketch's idea, Masson et
  al., VLDB 2019), and never above the exact maximum, which is kept apart.

A percentile is the nearest rank: the smallest size with at least ``q`` of the values at or below it
(numpy's ``method="inverted_cdf"``). Only values count: a tombstone (null value) has no size.
"""

from __future__ import annotations

import math
from bisect import bisect_right

EXACT_BELOW = 128
GAMMA = 1.02
RELATIVE_ERROR = (GAMMA - 1) / (GAMMA + 1)  # < 1%
MAX_SIZE = (1 << 31) - 1  # a record's value length is an int32
PERCENTILES = (("p50", 0.50), ("p90", 0.90), ("p99", 0.99))
METHOD = (f"exact below {EXACT_BELOW} bytes, within {RELATIVE_ERROR:.1%} above (log buckets); "
          "max exact; nearest rank")


def _lower_bounds() -> tuple[int, ...]:
    out = list(range(EXACT_BELOW))
    k = 0
    while True:
        lo = math.ceil(EXACT_BELOW * GAMMA ** k)
        if lo > MAX_SIZE:
            break
        if lo > out[-1]:
            out.append(lo)
        k += 1
    return tuple(out)


# the smallest size of each bucket, ascending: bucket i holds sizes in [LOWER[i], LOWER[i + 1]); sizes are
# whole bytes, so the buckets are whole ranges. The one definition of the buckets: a vectorised reader
# finds them with ``numpy.searchsorted(LOWER, sizes, side="right") - 1``
LOWER = _lower_bounds()


def bucket_index(size: int) -> int:
    """The bucket of one size (>= 0; a null value, -1, has none)."""
    return bisect_right(LOWER, size) - 1


def histogram(sizes) -> dict[int, int]:
    """Counts per bucket of the sizes (>= 0)."""
    out: dict[int, int] = {}
    for v in sizes:
        b = bucket_index(int(v))
        out[b] = out.get(b, 0) + 1
    return out


def merge(into: dict[int, int], other: dict[int, int]) -> dict[int, int]:
    for b, n in other.items():
        into[b] = into.get(b, 0) + n
    return into


def bucket_value(bucket: int) -> float:
    """What a bucket stands for: its size when exact, else for the sizes ``lo..hi`` it holds
    ``2 * lo * hi / (lo + hi)``, at most ``(hi - lo) / (hi + lo)`` (<= ``RELATIVE_ERROR``) from any of
    them, relative to that size."""
    lo = LOWER[bucket]
    if bucket < EXACT_BELOW:
        return float(lo)
    hi = LOWER[bucket + 1] - 1 if bucket + 1 < len(LOWER) else MAX_SIZE
    return 2 * lo * hi / (lo + hi)


def percentile(counts: dict[int, int], q: float, max_size: int | None = None) -> float | None:
    """The nearest-rank ``q`` percentile of a histogram; None when it holds no value."""
    n = sum(counts.values())
    if n == 0:
        return None
    rank = max(1, math.ceil(q * n))
    seen = 0
    for b in sorted(counts):
        seen += counts[b]
        if seen >= rank:
            v = bucket_value(b)
            return min(v, float(max_size)) if max_size is not None else v
    return None  # not reached


def summary(counts: dict[int, int], max_size: int | None) -> dict:
    """``value_bytes_p50/p90/p99/max`` of a histogram (None when there is no value)."""
    out = {f"value_bytes_{name}": percentile(counts, q, max_size) for name, q in PERCENTILES}
    out["value_bytes_max"] = max_size if counts else None
    return out
