"""What a message may quote of a bad file: a short, escaped excerpt, whatever the file holds."""

from __future__ import annotations

from monitor.fileio.excerpt import EXCERPT_CHARS, MESSAGE_CHARS, excerpt, shortened


def test_short_content_is_quoted_whole_and_escaped():
    assert excerpt("orders 0 12") == "'orders 0 12'"
    assert excerpt(b"a\x00b\tc\n") == "'a\\x00b\\tc\\n'"
    assert excerpt("it's \\ \u200b") == "'it\\'s \\\\ \\u200b'"
    assert excerpt(b"ok \xff\xfe") == "'ok \\xff\\xfe'"  # bytes that are no UTF-8: as the bytes


def test_long_content_is_cut_and_says_how_long_it_was():
    nul = excerpt(b"\x00" * 4096)
    assert nul.endswith("...' (4096 bytes)") and len(nul) < EXCERPT_CHARS + 30
    assert nul.startswith("'\\x00\\x00") and "\\x0'" not in nul  # whole escapes only, never cut inside one
    text = excerpt("x" * 268_435_456)
    assert text == "'" + "x" * EXCERPT_CHARS + "...' (268435456 characters)"
    assert excerpt(b"\x00" * 100, more=True).endswith("...' (more follows)")


def test_a_message_from_a_file_is_shortened_without_quotes():
    assert shortened("Corrupt record at offset 5") == "Corrupt record at offset 5"
    long = shortened("y" * 10_000 + "\x00")
    assert long == "y" * MESSAGE_CHARS + "... (10001 characters)"


def test_escaped_is_the_one_display_rule_for_keys_and_names():
    from monitor.fileio.excerpt import escaped

    assert escaped(b"key-505") == "key-505" and escaped("caf\u00e9") == "caf\u00e9"
    assert escaped(b"\x00\x01k\n") == "\\x00\\x01k\\n"  # control bytes as escapes, never drawn as boxes
    assert escaped(b"\xff\xfe") == "\\xff\\xfe"  # bytes that are no UTF-8, as the bytes
    assert escaped("a\\x00") == "a\\\\x00"  # a backslash of the content doubled: no escape is ambiguous
    assert escaped("it's") == "it's"  # unquoted: nothing to escape a quote for
    assert escaped("x" * 100, 10) == "x" * 9 + "…"
