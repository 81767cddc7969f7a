"""The errors a user can cause. Each carries one message meant to be shown as it is."""

from __future__ import annotations


class SentretError(ValueError):
    """Base of every user-facing error: the CLI prints it and exits 2, the app shows ``st.error``."""


class CorpusError(SentretError):
    """A corpus the user supplied cannot be read; the message says why and where."""


class IndexFormatError(SentretError):
    """A folder is not a sentret index, is of another format version, or is damaged."""


class QueryError(SentretError):
    """A query that cannot be scored (empty, or only stop words and punctuation)."""
