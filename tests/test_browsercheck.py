"""The browser checks' text rules (tests/browsercheck.py), without a browser: what they must flag and
what they must leave alone (words, dotted names, versions, hex numbers); and where a grid is scrolled to
be read whole."""

from __future__ import annotations

import pytest

from browsercheck import _spread, cell_problems, label_problems, log_problems, text_problems

FLAGGED = {
    "cleanable None": "None",
    "log.cleaner.enable None (admin)": "None",
    "age: None.": "None",
    "ratio nan": "not a number",
    "ratio NaN, lag 3 s": "not a number",
    "<NA>": "not a number",
    "NaT": "not a number",
    "-inf": "not a number",
    "dedupe buffer 1.34218e+08 (admin)": "scientific notation",
    "1.2e+06": "scientific notation",
    "min ratio 1e-05": "scientific notation",
    "(2.5E7 bytes)": "scientific notation",
}
LEFT_ALONE = [
    "Nonexistent topic", "None of the partitions needs attention.", "topic demo.none", "demo.None-x",
    "nano", "nanoseconds", "finance", "infinite retention", "info", "demo.nan", "a-nan-b",
    "1e", "log1e5", "key 1e5x", "Kafka 3.7.1e", "version 2.5.1e3", "offset 0x1e05", "0x2E7",
    "sha1e4", "1.34 GiB", "2026-12-07 11:32:36 UTC", "42 %", "",
]


@pytest.mark.parametrize("text,rule", FLAGGED.items())
def test_a_raw_value_is_flagged_with_its_rule_and_context(text, rule):
    found = text_problems(f"Config review: {text} seen")
    assert len(found) == 1 and found[0].startswith(rule), found
    assert text.split()[0] in found[0] and "seen" in found[0]  # the text around it, to find it on the page


@pytest.mark.parametrize("text", LEFT_ALONE)
def test_words_names_versions_and_hex_numbers_are_left_alone(text):
    assert text_problems(text) == []


def test_a_cell_is_flagged_when_empty_or_raw():
    assert cell_problems("") == cell_problems("  ") == ["empty (a missing value, drawn as a grey None)"]
    assert cell_problems("nan") == ["not a number 'nan'"]
    assert cell_problems("1.04858e+06") == ["scientific notation '1.04858e+06'"]
    assert cell_problems("1.0 MiB") == cell_problems("pending") == []


def test_column_labels_in_words_pass_and_python_names_do_not():
    assert label_problems("obsolete_bytes") == ["column label 'obsolete_bytes' is a Python name, not words"]
    assert label_problems("Obsolete bytes") == label_problems("topic") == label_problems("") == []


def test_each_deprecation_line_of_a_log_is_named_once_with_its_count(tmp_path):
    log = tmp_path / "dashboard.log"
    log.write_text(
        "2026-12-07 11:00:00.123 Please replace `use_container_width` with `width`.\n"
        "\n"
        "`use_container_width` will be removed after 2025-12-31.\n"
        "2026-12-07 11:00:05.456 Please replace `use_container_width` with `width`.\n"
        "  You can now view your Streamlit app in your browser.\n"
        "/x/y.py:3: DeprecationWarning: datetime.utcnow() is deprecated\n")
    assert log_problems(log) == [
        "dashboard.log: 2 x 'Please replace `use_container_width` with `width`.'",
        "dashboard.log: 1 x '`use_container_width` will be removed after 2025-12-31.'",
        "dashboard.log: 1 x '/x/y.py:3: DeprecationWarning: datetime.utcnow() is deprecated'",
    ]
    clean = tmp_path / "clean.log"
    clean.write_text("  You can now view your Streamlit app in your browser.\n")
    assert log_problems(clean) == []
    assert log_problems(tmp_path / "absent.log") == [f"no log at {tmp_path / 'absent.log'}"]


@pytest.mark.parametrize("scroll_range, step", [(1807, 298), (596, 298), (597, 298), (5, 298), (40, 40),
                                                (10_000, 30), (3, 30)])
def test_a_grid_is_read_in_views_that_overlap_reach_its_end_and_never_repeat_one(scroll_range, step):
    at = _spread(scroll_range, step)
    assert at[0] == 0 and at[-1] == scroll_range  # from the top to the end
    gaps = [b - a for a, b in zip(at, at[1:])]
    assert all(g <= step for g in gaps), gaps  # each view overlaps the one before (step: 3/4 of the view)
    # evenly spaced: no view a few pixels from the one before (it shows the same cells, and the reader
    # waits 5 s for a redraw that never comes), unless the grid scrolls by no more than that at all
    assert max(gaps) - min(gaps) <= 1, gaps
    assert len(at) == 1 + -(-scroll_range // step)  # no more views than the step needs


def test_a_grid_that_does_not_scroll_is_one_view():
    assert _spread(0, 298) == [0] and _spread(-10, 298) == [0]
