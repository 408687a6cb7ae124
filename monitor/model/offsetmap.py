"""Kafka's cleaner offset map (``SkimpyOffsetMap``): each key of the dirty section -> its latest offset,
built from key hashes in numpy rather than a record at a time.

Kafka hashes keys with MD5 into a fixed buffer (``log.cleaner.dedupe.buffer.size`` over the cleaner
threads, 24 bytes a slot, filled to ``log.cleaner.io.buffer.load.factor``); when the buffer is full the
clean stops mapping part way (``buildOffsetMapForSegment`` returns ``full``) and cleans only up to the
last offset it mapped. That cut depends on broker settings this map does not see, so a dirty section
with more keys than the default buffer holds (``DEFAULT_MAX_KEYS``) is reported, never cut by guess.
Here a key is its XXH64 (the decoder's ``key_hashes``, the hash the audit groups keys by): two keys
that collide on 64 bits would share a slot, as two keys colliding on MD5 share one in Kafka.
"""

from __future__ import annotations

from monitor.model.cleanarrays import np

# Kafka's defaults: log.cleaner.dedupe.buffer.size 128 MiB, one cleaner thread, MD5 (16 bytes) + an
# 8-byte offset per slot, log.cleaner.io.buffer.load.factor 0.9 (Cleaner's maxDesiredMapSize)
DEFAULT_DEDUPE_BUFFER_BYTES = 128 * 1024 * 1024
BYTES_PER_SLOT = 16 + 8
LOAD_FACTOR = 0.9
DEFAULT_MAX_KEYS = int(DEFAULT_DEDUPE_BUFFER_BYTES // BYTES_PER_SLOT * LOAD_FACTOR)
# (hash, offset) pairs buffered before they are folded into the map (64 MB of them); below it, finish
# also says which put was each key's last
MERGE_EVERY = 4 << 20
SPARSE_KEYS = 1 << 18


class MapFull(Exception):
    """More distinct keys than the map holds: Kafka's clean would stop mapping part way."""


def _full(n: int, max_keys: int) -> MapFull:
    return MapFull(f"{n} distinct keys in the dirty section, as many as or more than the {max_keys} Kafka's default "
                   "offset map holds (log.cleaner.dedupe.buffer.size 128 MiB, one thread): the clean would stop "
                   "part way, at a point that depends on the broker's settings")


def new_map(max_keys: int = DEFAULT_MAX_KEYS, numpy: bool = np is not None):
    """The numpy map (where numpy is installed), or the dict one."""
    return OffsetMap(max_keys) if numpy else DictOffsetMap(max_keys)


class DictOffsetMap:
    """The same map as a dict, for an install without numpy."""

    def __init__(self, max_keys: int = DEFAULT_MAX_KEYS):
        self.max_keys = max_keys
        self._latest: dict[int, int] = {}

    is_last = None  # (the numpy map's shortcut; a dict is looked up)

    def put(self, hashes, offsets) -> int:
        latest = self._latest
        for h, o in zip(hashes, offsets):
            latest[h] = o
        if len(latest) >= self.max_keys:
            raise _full(len(latest), self.max_keys)
        return 0

    def finish(self) -> "DictOffsetMap":
        return self

    def __len__(self) -> int:
        return len(self._latest)

    def latest(self, hashes) -> list:
        get = self._latest.get
        return [get(h, -1) for h in hashes]


def _last_of_each(h: np.ndarray) -> np.ndarray:
    """The place of each distinct value's last occurrence in ``h``, in the order of the values."""
    if not len(h):
        return np.empty(0, dtype=np.int64)
    order = np.argsort(h)
    hs = h[order]
    new = np.empty(len(h), dtype=bool)
    new[0] = True
    np.not_equal(hs[1:], hs[:-1], out=new[1:])
    return np.maximum.reduceat(order, np.flatnonzero(new))


class OffsetMap:
    """Key hash -> latest offset, folded from (hashes, offsets) chunks in offset order."""

    def __init__(self, max_keys: int = DEFAULT_MAX_KEYS):
        self.max_keys = max_keys
        self.hashes = np.empty(0, dtype=np.int64)  # sorted, unique (finish builds the lookup table)
        self.offsets = np.empty(0, dtype=np.int64)
        self._pending: list[tuple[np.ndarray, np.ndarray]] = []
        self._pending_n = 0
        self._puts = 0  # records put so far
        self._merged = False  # folded before finish: the puts' order is gone
        # after finish, when every put was folded at once: put number -> it is its key's latest
        # (a record of the dirty section is then judged without a lookup)
        self.is_last = None

    def put(self, hashes: np.ndarray, offsets: np.ndarray) -> int:
        """Records of one batch (offsets ascending, after every earlier put's); returns the number of
        the first of them among all puts (``is_last``'s index)."""
        start = self._puts
        if len(hashes):
            self._pending.append((hashes, offsets))
            self._pending_n += len(hashes)
            self._puts += len(hashes)
            if self._pending_n >= MERGE_EVERY:
                self._merged = True
                self._merge()
        return start

    def _merge(self) -> None:
        if not self._pending:
            return
        h = np.concatenate([self.hashes, *(p[0] for p in self._pending)])
        o = np.concatenate([self.offsets, *(p[1] for p in self._pending)])
        self._pending, self._pending_n = [], 0
        # the last of each key's offsets (they come in offset order): the highest place among its key's,
        # from an unstable sort (a stable one, as np.unique(return_index) takes, costs about 3 times as much)
        last = _last_of_each(h)
        self.hashes, self.offsets = h[last], o[last]
        if not self._merged and len(h) == self._puts:
            self.is_last = np.zeros(len(h), dtype=bool)
            self.is_last[last] = True
        if len(self.hashes) >= self.max_keys:  # Kafka puts while size < maxDesiredMapSize
            raise _full(len(self.hashes), self.max_keys)

    def finish(self) -> "OffsetMap":
        """Fold what is pending and build the lookup table: open addressing with linear probing, at
        most half full (a quarter below ``SPARSE_KEYS``), so that most keys are found at their home slot in one vector gather (a binary
        search over the sorted hashes costs a cache miss a level)."""
        self._merge()
        n = len(self.hashes)
        # a quarter full or less while it is small (most absent keys meet an empty slot at once), half
        # full past SPARSE_KEYS (16 bytes a slot)
        bits = max(4, ((4 if n < SPARSE_KEYS else 2) * n).bit_length())
        self._shift = np.uint64(64 - bits)
        # a key's home slot is the top bits of its hash read unsigned: in the order of the sorted
        # hashes already, so keys are placed in that order, each at its home or just after the one
        # before (linear probing's layout); the table runs on past its end instead of wrapping around
        home = self._home(self.hashes)
        step = np.arange(n, dtype=np.int64)
        slots = np.maximum.accumulate(home - step) + step if n else step
        size = max(1 << bits, int(slots[-1]) + 1 if n else 0) + 1  # ends with an empty slot: every probe stops
        self._keys = np.zeros(size, dtype=np.int64)
        self._vals = np.full(size, -1, dtype=np.int64)  # -1: an empty slot (offsets are >= 0)
        self._keys[slots], self._vals[slots] = self.hashes, self.offsets
        return self

    def _home(self, hashes: np.ndarray) -> np.ndarray:
        return ((hashes.view(np.uint64) ^ np.uint64(1 << 63)) >> self._shift).astype(np.int64)

    def __len__(self) -> int:
        return len(self.hashes)

    def latest(self, hashes) -> np.ndarray:
        """Each hash's latest offset in the map, -1 where the map has none (Kafka's ``map.get``): one
        probe of each home slot, a binary search of the sorted hashes for the few whose home slot
        holds another key (a handful of vector operations a batch, whatever its size)."""
        if not len(self.hashes):
            return np.full(len(hashes), -1, dtype=np.int64)
        hashes = np.ascontiguousarray(hashes, dtype=np.int64)
        home = self._home(hashes)
        vals = self._vals[home]
        found = (self._keys[home] == hashes) & (vals >= 0)
        out = np.where(found, vals, -1)
        further = ~found & (vals >= 0)  # an empty home slot: not in the map
        if further.any():
            q = hashes[further]
            i = np.searchsorted(self.hashes, q)
            i[i >= len(self.hashes)] = 0
            out[further] = np.where(self.hashes[i] == q, self.offsets[i], -1)
        return out
