"""The value-size histogram against numpy's percentiles of the same sizes: exact below EXACT_BELOW,
within RELATIVE_ERROR above, the same however the sizes are split and merged."""

from __future__ import annotations

import numpy as np
import pytest

from monitor.contract import valuesizes


def sizes(seed: int, n: int, high: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, high, n)


@pytest.mark.parametrize("high", [valuesizes.EXACT_BELOW, 1 << 20])
def test_percentiles_against_numpy(seed, high):
    s = sizes(seed, 5000, high)
    h = valuesizes.histogram(s)
    got = valuesizes.summary(h, int(s.max()))
    assert got["value_bytes_max"] == int(s.max())
    for name, q in valuesizes.PERCENTILES:
        want = float(np.percentile(s, q * 100, method="inverted_cdf"))
        if want < valuesizes.EXACT_BELOW:
            assert got[f"value_bytes_{name}"] == want
        else:
            assert got[f"value_bytes_{name}"] == pytest.approx(want, rel=valuesizes.RELATIVE_ERROR)


def test_every_size_lies_in_its_bucket_within_the_relative_error(seed):
    s = np.concatenate([np.arange(0, 4096), sizes(seed, 2000, 1 << 31)])
    for size, b in zip(s.tolist(), map(valuesizes.bucket_index, s.tolist())):
        v = valuesizes.bucket_value(b)
        assert v == size if size < valuesizes.EXACT_BELOW else abs(v - size) <= valuesizes.RELATIVE_ERROR * size


def test_a_vectorised_search_of_the_bounds_finds_the_same_buckets(seed):
    """What the audit's fold does (numpy.searchsorted on LOWER) equals the core's bucket_index."""
    s = np.concatenate([np.arange(0, 2000), sizes(seed, 2000, 1 << 31), [valuesizes.MAX_SIZE]])
    got = np.searchsorted(np.asarray(valuesizes.LOWER), s, side="right") - 1
    assert got.tolist() == [valuesizes.bucket_index(v) for v in s.tolist()]


def test_split_and_merged_in_any_order_gives_the_same_histogram(seed):
    s = sizes(seed, 3000, 100_000)
    whole = valuesizes.histogram(s)
    parts = np.array_split(np.random.default_rng(seed + 1).permutation(s), 7)
    merged: dict = {}
    for p in reversed(parts):
        valuesizes.merge(merged, valuesizes.histogram(p))
    assert merged == whole


def test_no_value_is_unknown_not_zero():
    assert valuesizes.summary({}, None) == {"value_bytes_p50": None, "value_bytes_p90": None,
                                            "value_bytes_p99": None, "value_bytes_max": None}
