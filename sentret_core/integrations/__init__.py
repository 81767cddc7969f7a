"""sentret in the IR ecosystem's formats: sentence ids as TREC docnos (:mod:`.docnos`), retrieval and
re-ranking over pandas frames in PyTerrier's column convention, convertible for ir_measures
(:mod:`.frames`, no dependency beyond pandas), and a PyTerrier transformer (:mod:`.pyterrier`, the
optional extra ``sentret[pyterrier]``)."""
