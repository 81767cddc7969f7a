"""The How it works page's ranking tables: the top 10 with its rank changes, as escaped HTML."""

from __future__ import annotations

import numpy as np
import streamlit as st

from sentret_core.index.reader import Index
from sentret_core.models import ModelSpec
from sentret_core.support.teaching import rank_changes
from sentret_core.ui.highlight import highlight
from sentret_core.ui.howto.computations import TOP, ParamItems, Ranked, ranked
from sentret_core.ui.render import term_spans
from sentret_core.ui.state import guarded
from sentret_core.ui.text import html_text, show_html


def ranking_html(
    index: Index, ids: list[int], scores: np.ndarray, changes: list[str], terms: tuple[str, ...], change: str
) -> str:
    """A ranking as an HTML table: rank, rank change, score and the whole sentence with its terms marked.

    Every piece of corpus text is escaped (``highlight`` escapes the sentence, ``html_text`` the
    title). Each row carries its sentence id and exact score as data attributes.
    """
    docs = np.asarray(index.sent_doc)
    rows = []
    for rank, (sentence, value, moved) in enumerate(zip(ids, scores, changes), start=1):
        body = highlight(index.texts[sentence], term_spans(index, sentence, list(terms)))
        title = html_text(index.titles[int(docs[sentence])])
        rows.append(
            f'<tr data-sentence="{sentence}" data-score="{float(value)!r}"><td class="num">{rank}</td>'
            f'<td class="change">{html_text(moved)}</td><td class="num">{float(value):.4f}</td>'
            f"<td><small><i>{title}</i></small><br>{body}</td></tr>"
        )
    head = f"<tr><th>#</th><th>{html_text(change)}</th><th>score</th><th>sentence</th></tr>"
    return f'<table class="sentret-ranking">{head}{"".join(rows)}</table>'


def ranking_table(
    index: Index, path: str, query: str, spec: ModelSpec, params: ParamItems, result: Ranked
) -> None:
    """The top 10 under the chosen parameters, each sentence's move against the model's defaults."""
    st.markdown(f"**Top {TOP}**")  # as **Parameters** beside it: a heading would push the rows down
    ids = [int(s) for s in result.ids]
    changes = ["="] * len(ids)
    artefact_params = {p.name for p in spec.param_specs() if p.artefact}
    same_artefacts = tuple((k, v) for k, v in params if k in artefact_params)  # compare parameters, not data
    if params != same_artefacts:
        defaults = guarded("compute the default ranking", ranked, path, query, spec.name, same_artefacts, TOP)
        if defaults is not None:
            changes = [c.label for c in rank_changes(defaults.ids.tolist(), ids)]
    show_html(ranking_html(index, ids, result.scores, changes, result.terms, "vs defaults"))
    st.caption("vs defaults: the rank change against the model's default parameters (↑ up, ↓ down, "
               "new: not in the default top 10). Query terms are marked.")
