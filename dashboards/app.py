"""The Streamlit dashboard: ``compaction-monitor dashboard`` (or ``streamlit run dashboards/app.py``)."""

from pathlib import Path

import streamlit as st

HERE = Path(__file__).resolve().parent
st.set_page_config(page_title="Kafka compaction health", page_icon="🧹", layout="wide")
pages = [
    st.Page(str(HERE / "pages" / "overview.py"), title="Overview", icon="🩺", default=True),
    st.Page(str(HERE / "pages" / "brokers.py"), title="Brokers", icon="🖥️"),
    st.Page(str(HERE / "pages" / "partitions.py"), title="Partitions", icon="🧱"),
    st.Page(str(HERE / "pages" / "tombstones.py"), title="Tombstones", icon="🪦"),
    st.Page(str(HERE / "pages" / "audit.py"), title="Audit", icon="📋"),
]
st.navigation(pages).run()
