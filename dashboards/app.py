"""The Streamlit dashboard: ``compaction-monitor dashboard`` (or ``streamlit run dashboards/app.py``)."""

from pathlib import Path

import streamlit as st

HERE = Path(__file__).resolve().parent
st.set_page_config(page_title="Kafka compaction health", page_icon=":material/cleaning_services:", layout="wide")
pages = [
    st.Page(str(HERE / "views" / "overview.py"), title="Overview", icon=":material/monitor_heart:", default=True),
    st.Page(str(HERE / "views" / "brokers.py"), title="Brokers", icon=":material/dns:"),
    st.Page(str(HERE / "views" / "partitions.py"), title="Partitions", icon=":material/view_module:"),
    st.Page(str(HERE / "views" / "tombstones.py"), title="Tombstones", icon=":material/delete_sweep:"),
    st.Page(str(HERE / "views" / "config_review.py"), title="Config review", icon=":material/rule:"),
    st.Page(str(HERE / "views" / "audit.py"), title="Audit", icon=":material/assignment:"),
]
st.navigation(pages).run()
