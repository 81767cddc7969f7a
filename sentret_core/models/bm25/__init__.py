"""BM25 and BM25F over sentences (Fernández et al., Inf. Retr. 2011, §3.5; Blanco & Zaragoza, SIGIR 2010, §5.1).

The family together: ``formulas``, ``scorer``, ``explain`` and the MaxScore top-k path (``pruning``); importing
``scorer`` registers its models.
"""
