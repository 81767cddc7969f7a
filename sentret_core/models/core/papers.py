"""The papers the sentence scorers come from, cited by the registry entries (docs/spec.md lists them)."""

from __future__ import annotations

FERNANDEZ_LOSADA_AZZOPARDI_2011 = (
    "Fernández, Losada & Azzopardi, Extending the language modeling framework for sentence "
    "retrieval to include local context, Inf. Retrieval 2011"
)
BLANCO_ZARAGOZA_2010 = "Blanco & Zaragoza, Finding support sentences for entities, SIGIR 2010, §5.1"
DOKO_STULA_STIPANICEV_2015 = (
    "Doko, Štula & Stipaničev, Improved sentence retrieval using local context and sentence "
    "length, IP&M 2015"
)
DOKO_STULA_STIPANICEV_2013 = (
    "Doko, Štula & Stipaničev, A recursive TF-ISF based sentence retrieval method with local context, 2013"
)
MOMTAZI_KLAKOW_2015 = (
    "Momtazi & Klakow, Bridging the vocabulary gap between questions and answer sentences, "
    "IP&M 2015"
)
ALLAN = "Allan, Wade & Bolivar, Retrieval and novelty detection at the sentence level, SIGIR 2003"
ROBERTSON = "Robertson & Zaragoza, The probabilistic relevance framework: BM25 and beyond, 2009"
VOSKARIDES = (
    "Voskarides, Meij, Tsagkias, de Rijke & Weerkamp, Learning to explain entity relationships in knowledge "
    "graphs, ACL 2015"
)
