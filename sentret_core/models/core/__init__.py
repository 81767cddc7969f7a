"""The machinery every scorer shares: the registry and ``ModelSpec``, parameters, query preparation,
result records, the derived-data cache and the public ``score``/``top_k``/``explain`` API."""
