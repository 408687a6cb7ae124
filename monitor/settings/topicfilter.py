"""Which topics the collector exports: allow and deny patterns, as kminion's allowedTopics /
ignoredTopics and kafka_exporter's --topic.filter / --topic.exclude have them.

A pattern is a Python regular expression matched against the whole topic name (anchored at both ends,
as Prometheus' relabelling matches: ``orders`` is that topic only, ``orders.*`` every topic starting
so). A topic is exported when it matches an allow pattern (no allow pattern: every topic) and no deny
pattern; deny wins. The collector applies it in one place (``collectors.export.exporter``: every series
with a ``topic`` label) and the config check compiles each pattern at load (``monitor.settings.configcheck``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field


class PatternError(ValueError):
    """A pattern that is no regular expression: ``index`` in its list and the reason."""

    def __init__(self, index: int, pattern: str, reason: str):
        self.index = index
        super().__init__(f"{pattern!r} is not a regular expression: {reason}")


def compile_patterns(patterns) -> tuple[re.Pattern, ...]:
    out = []
    for i, p in enumerate(patterns):
        try:
            out.append(re.compile(p))
        except re.error as exc:
            raise PatternError(i, p, str(exc)) from None
    return tuple(out)


@dataclass
class TopicFilter:
    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    _allow: tuple = field(init=False, repr=False)
    _deny: tuple = field(init=False, repr=False)
    _seen: dict = field(init=False, repr=False, default_factory=dict)

    def __post_init__(self):
        self._allow, self._deny = compile_patterns(self.allow), compile_patterns(self.deny)

    @property
    def everything(self) -> bool:
        return not self.allow and not self.deny

    def __call__(self, topic: str) -> bool:
        """Whether ``topic`` is exported (remembered: a topic name is tested once)."""
        got = self._seen.get(topic)
        if got is None:
            got = ((not self._allow or any(p.fullmatch(topic) for p in self._allow))
                   and not any(p.fullmatch(topic) for p in self._deny))
            if len(self._seen) < 1_000_000:
                self._seen[topic] = got
        return got
