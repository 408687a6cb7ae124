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
