"""The one bound on what a reader of Kafka's files holds in memory, whatever a length in the file claims.

Why a bound at all: every length in a segment, a producer snapshot or a ``.txnindex`` is read from
the file, and one damaged length field (a batch header claiming a gigabyte) must not make the
collector allocate it: a long-running collector would die of one bad file on a broker's disk.

Why ``MAX_BATCH_BYTES`` is 100 MiB: it is Kafka's default ``socket.request.max.bytes``
(104857600), the largest produce request a broker reads, so no batch written through a broker
with default socket settings is larger, even with ``message.max.bytes`` (default 1 MiB + 12) or
the topic's ``max.message.bytes`` raised. A batch up to it is read whole and decoded exactly; a
batch past it (possible only where both settings were raised past 100 MiB), or a length claiming
more, is checked from the file in ``READ_PIECE_BYTES`` pieces (its CRC) and reported as a fault
naming file and byte position, its records unknown. The same bound caps a batch's records once
decompressed (a few KiB of zstd can claim gigabytes), and the entries a producer snapshot or a
``.txnindex`` may hold (100 MiB is 2.2 million producers, 3 million aborted transactions in one
segment: far past anything a broker keeps); both files are read in pieces, never whole.

Memory per reading thread is then at most about twice the bound (a batch and its records
decompressed), plus the decoded records' objects, which grow with how many records there are,
not with what a length claims.
"""

from __future__ import annotations

MAX_BATCH_BYTES = 100 * 1024 * 1024
"""The most bytes of one batch (on disk, or its records decompressed) or of one snapshot's or
``.txnindex``'s entries a reader holds in memory: Kafka's default ``socket.request.max.bytes``."""

READ_PIECE_BYTES = 1 << 20
"""The piece in which what is larger than the bound (or a whole snapshot or ``.txnindex``) is read."""
