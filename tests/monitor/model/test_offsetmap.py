"""monitor.model.offsetmap: the cleaner's key -> latest offset map, its hash table and its dict form give
Kafka's ``map.get`` for every key, present or not (edge hashes included), and the dirty-section bound."""

from __future__ import annotations

import numpy as np
import pytest

from monitor.model import offsetmap
from monitor.model.offsetmap import DictOffsetMap, MapFull, OffsetMap


def puts(n: int, seed: int = 1):
    rng = np.random.default_rng(seed)
    h = rng.integers(-2**63, 2**63 - 1, n, dtype=np.int64)
    h[n // 2:n // 2 + n // 10] = h[:n // 10]  # keys written again later
    if n > 6:
        h[:3] = [-(1 << 63), 0, 1]  # the smallest hash, an empty slot's key, its neighbour
        h[-3:] = [-1, -2, (1 << 63) - 1]
    return h, np.arange(n, dtype=np.int64) * 3


@pytest.mark.parametrize("n", [0, 1, 7, 5000, pytest.param(300_000, marks=pytest.mark.slow)])  # 300,000 keys: ~1 s
def test_the_table_answers_as_a_dict_of_the_last_offsets(n):
    h, o = puts(n)
    m = OffsetMap()
    for lo in range(0, n, 4096):  # a batch at a time
        m.put(h[lo:lo + 4096], o[lo:lo + 4096])
    m.finish()
    expected = {}
    for k, v in zip(h.tolist(), o.tolist()):
        expected[k] = v
    q = np.concatenate([h, np.random.default_rng(2).integers(-2**63, 2**63 - 1, 2000, dtype=np.int64),
                        np.zeros(2, dtype=np.int64)])
    want = [expected.get(k, -1) for k in q.tolist()]
    assert m.latest(q).tolist() == want
    d = DictOffsetMap()
    d.put(h.tolist(), o.tolist())
    assert d.latest(q.tolist()) == want and len(d) == len(m) == len(expected)
    # which put was each key's last: exactly the puts whose offset the map holds
    if n:
        assert m.is_last.tolist() == [expected[k] == v for k, v in zip(h.tolist(), o.tolist())]


def test_folded_in_parts_it_still_answers_but_forgets_the_puts_order(monkeypatch):
    monkeypatch.setattr(offsetmap, "MERGE_EVERY", 1000)
    h, o = puts(5000)
    m = OffsetMap()
    for lo in range(0, 5000, 300):
        m.put(h[lo:lo + 300], o[lo:lo + 300])
    m.finish()
    expected = dict(zip(h.tolist(), o.tolist()))
    assert m.latest(h).tolist() == [expected[k] for k in h.tolist()] and m.is_last is None


@pytest.mark.parametrize("kind", [OffsetMap, DictOffsetMap])
def test_as_many_keys_as_kafkas_map_holds_is_full(kind):
    m = kind(max_keys=10)
    with pytest.raises(MapFull, match="10 distinct keys"):
        m.put(np.arange(10, dtype=np.int64), np.arange(10, dtype=np.int64))
        m.finish()
    m = kind(max_keys=10)
    m.put(np.arange(9, dtype=np.int64), np.arange(9, dtype=np.int64))
    assert len(m.finish()) == 9
