"""The model families: what a model's ``family`` may name, and what the family tells the code that runs it.

Every registered model names a family (:attr:`~sentret_core.models.core.spec.ModelSpec.family`); the registry
refuses a name not declared here. A new family is declared once, by the module of its first model, before that
model registers::

    declare_family("coord", "coordination level: how many query terms a sentence holds", reads_postings=True)

so a model of a new family still takes the three files docs/extending.md lists.
"""

from __future__ import annotations

from dataclasses import dataclass

from sentret_core.errors import SentretError


@dataclass(frozen=True)
class Family:
    """A family of models: its name (a model's ``family``), a one-line description, and whether its scorers read
    the query terms' sentence postings (``search`` then checks their blocks up front, two files at once)."""

    name: str
    description: str
    reads_postings: bool = False


FAMILIES: dict[str, Family] = {}


def declare_family(name: str, description: str, *, reads_postings: bool = False) -> Family:
    """Declare the family ``name`` (lowercase letters, digits and ``-``); declaring it again with the same
    description and flags is a no-op (a module imported twice), with others an error."""
    if not name or not name.replace("-", "").isalnum() or name != name.lower():
        raise SentretError(f"family {name!r}: use lowercase letters, digits and '-'")
    family = Family(name, description, reads_postings)
    known = FAMILIES.setdefault(name, family)
    if known != family:
        raise SentretError(f"family {name!r} is already declared, as {known}")
    return family


def undeclare_family(name: str) -> None:
    """Remove the family ``name`` (a test's toy family); models of it must be unregistered first."""
    if FAMILIES.pop(name, None) is None:
        raise SentretError(f"family {name!r} is not declared")


def get_family(name: str) -> Family:
    """The family ``name``; a SentretError naming the declared ones otherwise."""
    found = FAMILIES.get(name)
    if found is None:
        raise SentretError(f"no model family {name!r}: declare it with declare_family() before registering "
                           f"its models (declared: {', '.join(FAMILIES)})")
    return found


declare_family("tfisf", "TF-ISF: term frequency times inverse sentence frequency, with context", reads_postings=True)
declare_family("bm25", "BM25 and BM25F: the probabilistic relevance framework", reads_postings=True)
declare_family("lm", "query-likelihood language models, smoothed by the context, the document, classes or triggers",
               reads_postings=True)
declare_family("embed", "static word vectors: the sentence's mean vector, or word-to-word alignment")
declare_family("minilm", "a transformer sentence encoder: the cosine of sentence embeddings")
declare_family("ltr", "learned rankers over the other models' scores and ranks")
