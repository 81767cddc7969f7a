"""Evaluation: TREC I/O, tie-aware metrics, significance, tuning, coverage, benchmarks and runs."""
