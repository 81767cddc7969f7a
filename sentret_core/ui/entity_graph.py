"""The entity graph of a support result as Graphviz DOT: query → entities → the documents of their support."""

from __future__ import annotations

from sentret_core.support.records import SupportResult
from sentret_core.ui.highlight import label_color


def _quote(text: str) -> str:
    """A DOT string literal: backslashes and quotes escaped, line breaks removed."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ") + '"'


def entity_graph_dot(result: SupportResult, max_entities: int = 12, max_documents: int = 3) -> str:
    """Entities (coloured by label) tied to the documents holding their support sentences.

    Two entities supported by the same document share that document node, which is what makes
    the graph worth looking at: it shows which sources tie the query's entities together.
    """
    lines = [
        "digraph entities {",
        '  graph [rankdir=LR, bgcolor="transparent", fontname="Helvetica"];',
        # explicit text on every filled node and mid-grey edges: readable on a light or a dark page
        '  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=11, fontcolor="#111827"];',
        '  edge [color="#9ca3af"];',
        f'  query [label={_quote(result.query)}, fillcolor="#fde68a", shape=ellipse];',
    ]
    documents: dict[str, str] = {}
    for es in result.entities[:max_entities]:
        e = es.entity
        node = f"e{e.entity}"
        lines.append(
            f"  {node} [label={_quote(f'{e.text} ({e.label})')}, fillcolor={_quote(label_color(e.label))}];"
        )
        lines.append(f"  query -> {node} [penwidth={1 + 3 * min(e.frequency, 20) / 20:.2f}];")
        titles: list[str] = []
        for sentences in es.sentences.values():
            for s in sentences:
                if s.title not in titles:
                    titles.append(s.title)
        for title in titles[:max_documents]:
            if title not in documents:
                documents[title] = f"d{len(documents)}"
                lines.append(
                    f'  {documents[title]} [label={_quote(title)}, fillcolor="#f3f4f6", shape=note];'
                )
            lines.append(f'  {node} -> {documents[title]} [color="#9ca3af"];')
    lines.append("}")
    return "\n".join(lines)
