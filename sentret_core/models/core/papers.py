"""The papers the sentence scorers come from, cited by the registry entries (docs/spec.md lists them)."""

from __future__ import annotations

PAPER_000 = (
    "Fernández, Losada & Azzopardi, Extending the language modeling framework for sentence "
    "retrieval to include local context, Inf. Retrieval 2011"
)
PAPER_002 = "Blanco & Zaragoza, Finding support sentences for entities, SIGIR 2010, §5.1"
PAPER_003 = (
    "Doko, Štula & Stipaničev, Improved sentence retrieval using local context and sentence "
    "length, IP&M 2015"
)
PAPER_004 = (
    "Doko, Štula & Stipaničev, A recursive TF-ISF based sentence retrieval method with local context, 2013"
)
ALLAN = "Allan, Wade & Bolivar, Retrieval and novelty detection at the sentence level, SIGIR 2003"
ROBERTSON = "Robertson & Zaragoza, The probabilistic relevance framework: BM25 and beyond, 2009"
VOSKARIDES = (
    "Voskarides, Meij, Tsagkias, de Rijke & Weerkamp, Learning to explain entity relationships in knowledge "
    "graphs, ACL 2015"
)
