"""sentret's Streamlit app: builds the navigation and nothing else (the pages live in sentret_core.ui)."""

import streamlit as st

from sentret_core.ui import admin_page, annotate_page, corpus_page, evaluate_page, explore_page, howto_page

st.set_page_config(page_title="sentret — entity support sentences", page_icon="🔎", layout="wide")
navigation = st.navigation(
    [
        st.Page(explore_page.render, title="Explore", icon="🔎", url_path="explore", default=True),
        st.Page(howto_page.render, title="How it works", icon="🧮", url_path="how-it-works"),
        st.Page(corpus_page.render, title="Corpus", icon="📚", url_path="corpus"),
        st.Page(annotate_page.render, title="Annotate", icon="✍️", url_path="annotate"),
        st.Page(evaluate_page.render, title="Evaluate", icon="📊", url_path="evaluate"),
        st.Page(admin_page.render, title="Admin", icon="🔐", url_path="admin"),
    ]
)
navigation.run()
