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
