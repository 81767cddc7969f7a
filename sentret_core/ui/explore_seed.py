"""How the Explore page starts: its widgets seeded from the URL once per browser session (a bad value named in
a warning), the example queries, and on the built-in demo, a plain visit's first example shown at once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import streamlit as st

from sentret_core import defaults
from sentret_core.index.reader import Index
from sentret_core.support.entity_stats import ENTITY_SCORES
from sentret_core.support.weighting import ENTITY_WEIGHTINGS
from sentret_core.ui.offered import learned_choice, offered_models, support_models, untrained
from sentret_core.ui.state import current_index_path
from sentret_core.ui.url import UrlReader, show_warnings

QUERY_FILE = Path(__file__).resolve().parent / "queries" / "demo.txt"  # package data: found from a wheel too
MAX_MODELS = 4
FIRST_EXAMPLE = "explore_first_example"  # the example a plain visit to the demo opened with


def example_queries() -> list[str]:
    lines = QUERY_FILE.read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def plain_visit(index: Index, path: str) -> dict[str, Any]:
    """The settings a visit without a query in its link starts with (the URL's values replace them)."""
    labels = sorted(index.entity_labels.names)
    return {"ranker": defaults.DEFAULT_RANKER, "k": defaults.EXPLORE_K, "score": defaults.DEFAULT_ENTITY_SCORE,
            "weighting": defaults.EXPLORE_ENTITY_WEIGHTING,
            "labels": [lab for lab in labels if lab not in defaults.DEFAULT_EXCLUDED_LABELS],
            "models": default_columns(path), "per": defaults.DEFAULT_PER_ENTITY}


def first_example_request(index: Index, path: str) -> tuple[Any, ...] | None:
    """``cached_support``'s arguments for a plain visit to the demo (its first example at :func:`plain_visit`'s
    settings), which the server's warm-up computes before anyone asks; None for another index."""
    if index.manifest.get("source") != "demo":
        return None
    s = plain_visit(index, path)
    return (path, example_queries()[0], s["ranker"], s["k"], s["score"], s["weighting"], tuple(s["labels"]),
            tuple(s["models"]), s["per"], None)


def seed_from_url(index: Index) -> None:
    """Seed the widgets from the URL once per session; a bad value is named in a warning."""
    if st.session_state.get("explore_seeded"):
        return
    url = UrlReader()
    labels = sorted(index.entity_labels.names)
    plain = plain_visit(index, str(current_index_path()))
    st.session_state["explore_query"] = url.text("q").strip()
    if not url.has("q") and index.manifest.get("source") == "demo":  # a plain visit to the demo: an example at once
        first = example_queries()[0]
        st.session_state["explore_query"] = st.session_state["explore_last_example"] = first
        st.session_state["explore_example"] = st.session_state[FIRST_EXAMPLE] = first
    st.session_state["explore_ranker"] = url.choice("ranker", offered_models(), plain["ranker"])
    st.session_state["explore_k"] = url.integer("k", 1, defaults.APP_MAX_K, plain["k"])
    st.session_state["explore_score"] = url.choice("score", ENTITY_SCORES, plain["score"])
    st.session_state["explore_weighting"] = url.choice("weighting", ENTITY_WEIGHTINGS, plain["weighting"])
    st.session_state["explore_labels"] = url.many("labels", labels, plain["labels"])
    st.session_state["explore_models"] = url.many("models", support_models(), plain["models"], MAX_MODELS)
    st.session_state["explore_per_entity"] = url.integer("per", 1, 10, plain["per"])
    st.session_state["explore_restating"] = url.flag("restating", True)
    st.session_state["explore_graph"] = url.flag("graph", False)
    st.session_state["explore_ltr_model"] = learned_choice(url)
    st.session_state["explore_url_entity"] = st.session_state["explore_link_entity"] = url.params.get("entity")
    st.session_state["explore_url_warnings"] = (st.session_state["explore_query"], url.warnings)
    st.session_state["explore_seeded"] = True


def default_columns(path: str) -> list[str]:
    """The support models shown until a user chooses: the defaults, and the transformer once its vectors exist."""
    semantic = defaults.EXPLORE_SEMANTIC_MODEL
    ready = untrained(semantic, path) is None
    return [*defaults.DEFAULT_SUPPORT_MODELS, *([semantic] if ready else [])]


def url_warnings(query: str) -> None:
    """The link's bad values, shown while its query is the one on the page."""
    seeded = st.session_state.get("explore_url_warnings")
    if seeded and seeded[0] == query:
        show_warnings(seeded[1])
