"""The audit's progress lines: one prefix, on stderr (stdout stays the command's own)."""

from __future__ import annotations

import sys


def log(msg: str) -> None:
    print(f"[audit] {msg}", file=sys.stderr, flush=True)
