"""The one way tests wait: ``wait_for(condition, timeout, what)`` polls until the condition holds and,
if it never does, fails with a message naming what never happened (and the last value seen).

Tests wait for the condition they mean (a config in force, a cleaner pass in its checkpoint, a
source marked up), never for a fixed time: on a loaded 2-core machine any fixed sleep is either
too short (a flaky failure) or too long (a slow suite)."""

from __future__ import annotations

import time


def wait_for(condition, timeout: float = 60.0, what: str = "the condition", *, interval: float = 0.1):
    """Call ``condition()`` until it returns something truthy; return that. After ``timeout`` seconds
    raise ``TimeoutError`` naming ``what`` never happened. An exception from ``condition`` is raised
    at once: a condition that cannot be evaluated is a failure, not something to wait out."""
    deadline = time.monotonic() + timeout
    last = None
    while True:
        last = condition()
        if last:
            return last
        if time.monotonic() >= deadline:
            raise TimeoutError(f"{what} never happened within {timeout:g}s (last: {last!r})")
        time.sleep(interval)  # the poll interval: the only sleep that waits for something
