"""Relevance-annotation sessions: the SQLite store, identity, pooling, agreement, judged evaluation."""
