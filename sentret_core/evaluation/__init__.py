"""Evaluation (Blanco & Zaragoza, SIGIR 2010, §4; tie-aware as McSherry & Najork, ECIR 2008), one job per module.

Pure functions of their arguments: :mod:`.trec_io` (qrels/run files, topic ids), :mod:`.metrics`
(tie-aware metrics on score arrays), :mod:`.measures` (metric names, gains, ``evaluate``),
:mod:`.significance`, :mod:`.tuning`, :mod:`.crossval`, :mod:`.coverage`.
On benchmarks: :mod:`.benchmarks` (converters), :mod:`.evaluable` (model names), :mod:`.runs`
(scoring topics), :mod:`.plan`, :mod:`.driver` and :mod:`.report`.
"""
