"""JSON as strict parsers read it: no NaN, Infinity or -Infinity (Python's json writes them by default,
and jq, Go, JavaScript's JSON.parse and most others reject the file).

Every JSON the project writes goes through ``dumps``/``dump`` here, with ``allow_nan=False``: a figure
that cannot be known is written as null, with a reason field where a reader needs one (the producer
of the value decides: ``monitor.model.estimate.CleanerParams.throttle``, the audit's summary, ...), and a
non-finite float that slips through fails loudly at the write instead of producing a file others
cannot read.
"""

from __future__ import annotations

import json
from typing import IO, Any


def dumps(obj: Any, **kw) -> str:
    return json.dumps(obj, allow_nan=False, **kw)


def dump(obj: Any, fp: IO[str], **kw) -> None:
    json.dump(obj, fp, allow_nan=False, **kw)
