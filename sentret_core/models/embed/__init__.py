"""The semantic family: cosine similarity of static word embeddings (``embed.v1``)."""
