"""sentret's Streamlit app: builds the navigation and nothing else (the pages live in sentret_core.ui)."""

import streamlit as st

from sentret_core.ui.pages import admin, annotate, corpus, evaluate, explore, howto

st.set_page_config(page_title="sentret — entity support sentences", page_icon="🔎", layout="wide")
navigation = st.navigation(
    [
        st.Page(explore.render, title="Explore", icon="🔎", url_path="explore", default=True),
        st.Page(howto.render, title="How it works", icon="🧮", url_path="how-it-works"),
        st.Page(corpus.render, title="Corpus", icon="📚", url_path="corpus"),
        st.Page(annotate.render, title="Annotate", icon="✍️", url_path="annotate"),
        st.Page(evaluate.render, title="Evaluate", icon="📊", url_path="evaluate"),
        st.Page(admin.render, title="Admin", icon="🔐", url_path="admin"),
    ]
)
navigation.run()
