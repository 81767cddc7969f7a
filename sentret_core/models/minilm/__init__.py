"""The transformer family: a MiniLM sentence encoder run in numpy (``minilm.v1``)."""
