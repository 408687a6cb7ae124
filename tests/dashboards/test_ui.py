"""Page plumbing: a bad monitor.yaml is shown on the page, every problem named, not raised."""

from pathlib import Path

import pytest

VIEWS = Path(__file__).resolve().parents[2] / "dashboards" / "views"


@pytest.mark.parametrize("view", sorted(p.stem for p in VIEWS.glob("*.py")))
def test_a_bad_config_is_shown_not_raised(view, tmp_path, monkeypatch):
    from streamlit.testing.v1 import AppTest  # here, not at the top: collecting the fast tier skips its 0.4 s

    cfg = tmp_path / "monitor.yaml"
    cfg.write_text("clusters:\n  - client: SASL_SSL\nintervals: {jmx: .inf}\n")
    monkeypatch.setenv("COMPACTION_MONITOR_NO_AUTOREFRESH", "1")
    monkeypatch.setenv("COMPACTION_MONITOR_CONFIG", str(cfg))
    at = AppTest.from_file(str(VIEWS / f"{view}.py"), default_timeout=60)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    [err] = at.error
    assert f"{cfg}: clusters[0].client: expected a mapping" in err.value
    assert f"{cfg}: intervals.jmx: expected a finite number of seconds above 0, got inf" in err.value


def test_a_table_wider_than_the_window_is_narrowed_to_fit_and_one_that_fits_is_left_alone():
    """Every grid goes through ``ui.grid``: its columns narrowed (max-min fair) when the whole would scroll
    sideways in a 1366-pixel window; the narrow identifying columns keep their width."""
    import pandas as pd

    from dashboards import display

    narrow = pd.DataFrame({"Topic": ["orders"], "Partition": ["3"]})
    assert display.fit_widths(display.natural_widths(narrow)) is None
    wide = pd.DataFrame({"Topic": ["orders"], "Partition": ["3"], "Why": ["x" * 200], "Fix": ["y" * 150]})
    got = display.fit_widths(display.natural_widths(wide))
    assert sum(got.values()) <= display.TABLE_PX and got["Partition"] == display.natural_widths(wide)["Partition"]
    assert got["Why"] == got["Fix"] >= display.MIN_COLUMN_PX


def test_a_cell_is_measured_by_its_characters_so_a_fitting_table_is_not_cut():
    """The Config review's findings (a long topic beside the longest check name) fit a 1366-pixel window
    as drawn; one width for every character made "min.cleanable.dirty.ratio" as wide as 25 m's and cut
    "delete_retention_below_consumer_lag"."""
    import pandas as pd

    from dashboards import display

    # measured on the Config review's screenshot at 1366 px: (text, pixels drawn)
    for text, drawn in [("segment_roll_beyond_traffic", 171), ("min.cleanable.dirty.ratio", 144),
                        ("browser-5cd797d4.tombstone-flood", 210), ("delete.retention.ms", 116)]:
        assert drawn <= display.text_px(text) <= drawn * 1.1, text
    assert display.text_px("MMMM") > display.text_px("mmmm") > display.text_px("iiii")
    findings = pd.DataFrame({"topic": ["browser-5cd797d4.tombstone-flood"],
                             "check": ["delete_retention_below_consumer_lag"], "setting": ["min.cleanable.dirty.ratio"],
                             "now": ["10 min"], "suggested": ["1 d"]})
    assert display.fit_widths(display.natural_widths(findings)) is None
    many = pd.DataFrame({"x": [f"{i}" for i in range(20_000)] + ["the longest text in the column"]})
    assert display.natural_widths(many)["x"] == display.CELL_PAD_PX + display.text_px("the longest text in the column")


def test_a_header_wider_than_its_cells_gives_way_before_a_cell_is_cut():
    """The Tombstones page's delete horizons: long headers over short counts beside a long topic name. The
    headers are cut first (down to HEADER_KEEP_PX), the topic's name is not; with no header room left, the
    cells share what is left as before."""
    import pandas as pd

    from dashboards import display

    table = pd.DataFrame({"Topic": ["browser-7929f643.healthy-changelog"], "Partition": ["0"],
                          "Next removal (UTC)": ["unknown (none ahead)"], "Tombstones unstamped": ["pending"],
                          "Tombstones pending": ["pending"], "Tombstones passed": ["pending"]})
    cells = display.cell_widths(table)
    natural = display.natural_widths(table, cells)
    assert sum(natural.values()) > display.TABLE_PX
    got = display.fit_widths(natural, cells=cells)
    assert sum(got.values()) <= display.TABLE_PX
    assert got["Topic"] == natural["Topic"] and got["Next removal (UTC)"] == natural["Next removal (UTC)"]
    assert all(cells[c] <= got[c] < natural[c] for c in ("Tombstones unstamped", "Tombstones pending"))
    wide = pd.DataFrame({"Topic": ["a" * 80], "Why": ["x" * 200], "Tombstones unstamped": ["0"]})
    cells = display.cell_widths(wide)
    got = display.fit_widths(display.natural_widths(wide, cells), cells=cells)
    assert got["Tombstones unstamped"] == display.HEADER_KEEP_PX and got["Topic"] == got["Why"]
    assert sum(got.values()) <= display.TABLE_PX
