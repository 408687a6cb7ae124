"""The browser checks (tests/browsercheck.py) on a real Streamlit page in headless Chromium: a page
written here with one of each problem has each found where it is (once for a column where it recurs),
every cell of a grid larger than its view included; the same page made right has none."""

from __future__ import annotations

import re
import sys
import textwrap

import pytest

from browsercheck import page_problems, read_grid
from localkafka.processes import free_port, process
from tests_support_browser import browser, wait_rendered

pytestmark = pytest.mark.slow  # a Streamlit server and Chromium

PAGE = """
import pandas as pd
import streamlit as st

BAD = {bad}
st.title("Probe")
st.write("dedupe buffer " + ("1.34218e+08" if BAD else "128 MiB") + ", enabled " + ("None" if BAD else "true"))
rows = 40
df = pd.DataFrame({{"topic": [f"demo.t{{i}}" for i in range(rows)],
                   "age": [1.5 * i for i in range(rows)],
                   **{{f"detail {{j}}": ["x" * (30 if BAD else 3)] * rows for j in range(12 if BAD else 2)}}}})
if BAD:
    df.loc[3, "age"] = None
    df["last column"] = ["ok"] * (rows - 1) + ["nan"]
    df["eligible since"] = [None] * rows
    df = df.rename(columns={{"topic": "topic_name"}})
st.subheader("Dirty partitions")
st.dataframe(df, hide_index=True)
"""


def serve(tmp_path, bad: bool):
    script = tmp_path / f"page_{bad}.py"
    script.write_text(textwrap.dedent(PAGE.format(bad=bad)))
    port = free_port()
    cmd = [sys.executable, "-m", "streamlit", "run", str(script), "--server.headless=true",
           f"--server.port={port}", "--server.address=127.0.0.1", "--browser.gatherUsageStats=false"]
    return process(cmd, tmp_path / "streamlit.log", f"http://127.0.0.1:{port}/_stcore/health"), port


def test_each_problem_is_found_where_it_is_and_a_right_page_has_none(tmp_path):
    bad_server, bad_port = serve(tmp_path, True)
    good_server, good_port = serve(tmp_path, False)
    with bad_server, good_server, browser() as d:
        d.set_window_size(1366, 1000)
        d.get(f"http://127.0.0.1:{bad_port}/")
        wait_rendered(d, 0)
        grid = read_grid(d, 0, "Dirty partitions")
        assert (grid.rows, grid.cols, grid.missing()) == (41, 16, 0)  # 40 rows and the labels, all read
        assert grid.cells[(41, 15)] == "nan"  # the last cell, out of the first view both ways
        found = page_problems(d, "Probe")
        where = "Probe page, table 1 'Dirty partitions'"
        # the text's findings with the words around them, to find them on the page
        assert all("buffer 1.34218e+08, enabled None" in f for f in found if ", text: " in f), found
        assert [re.sub(r" in '.*'$", "", f) for f in found] == [
            "Probe page, text: None 'None'",
            "Probe page, text: scientific notation '1.34218e+08'",
            f"{where}: column label 'topic_name' is a Python name, not words",
            f"{where}, column 'eligible since': empty (a missing value, drawn as a grey None), in 40 of 40 rows "
            "(row 1 (demo.t0), row 2 (demo.t1), ...)",  # said once for the column
            f"{where}, row 4 (demo.t3), column 'age': empty (a missing value, drawn as a grey None)",
            f"{where}, row 40 (demo.t39), column 'last column': not a number 'nan'",
            f"{where}: scrolls sideways at 1366 px ({grid_width(d)})",
        ], found

        d.get(f"http://127.0.0.1:{good_port}/")
        wait_rendered(d, 0)
        assert page_problems(d, "Probe") == []


def grid_width(d) -> str:
    sw, cw = d.execute_script("const s = document.querySelector('.dvn-scroller'); return [s.scrollWidth, s.clientWidth];")
    return f"{sw} px of content in {cw} px"
