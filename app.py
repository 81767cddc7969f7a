"""sentret's Streamlit app: builds the navigation and nothing else (the pages live in sentret_core.ui)."""

import streamlit as st

from sentret_core.ui import corpus_page, explore_page

st.set_page_config(page_title="sentret — entity support sentences", page_icon="🔎", layout="wide")
navigation = st.navigation(
    [
        st.Page(explore_page.render, title="Explore", icon="🔎", url_path="explore", default=True),
        st.Page(corpus_page.render, title="Corpus", icon="📚", url_path="corpus"),
    ]
)
navigation.run()
