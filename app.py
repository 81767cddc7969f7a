"""sentret's Streamlit app: builds the navigation and nothing else (the pages live in sentret_core.ui)."""

import streamlit as st

from sentret_core.ui.pages import admin, annotate, corpus, evaluate, explore, howto
from sentret_core.ui.state import warm_up

st.set_page_config(page_title="sentret — entity support sentences", page_icon="🔎", layout="wide")
warm_up()  # once per process: the index, the query tokenizer and the default models' statistics, in the background
navigation = st.navigation(
    [
        # Explore answers at / (the default) and at /explore (the sidebar's link), so both kinds of link work
        st.Page(explore.render, title="Explore", icon="🔎", url_path="home", default=True, visibility="hidden"),
        st.Page(explore.render, title="Explore", icon="🔎", url_path="explore"),
        st.Page(howto.render, title="How it works", icon="🧮", url_path="how-it-works"),
        st.Page(corpus.render, title="Corpus", icon="📚", url_path="corpus"),
        st.Page(annotate.render, title="Annotate", icon="✍️", url_path="annotate"),
        st.Page(evaluate.render, title="Evaluate", icon="📊", url_path="evaluate"),
        st.Page(admin.render, title="Admin", icon="🔐", url_path="admin"),
    ]
)
navigation.run()
