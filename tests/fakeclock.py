"""A clock a test moves by hand: called for the time, ``sleep`` moves it on at once (and is recorded), so a
budget or a wait is tested by what it asks for, never by wall time."""

from __future__ import annotations


class FakeClock:
    def __init__(self, now: float = 0.0):
        self.now = now
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, s: float) -> None:
        self.slept.append(s)
        self.now += s
