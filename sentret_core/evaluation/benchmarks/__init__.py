"""Benchmark converters: WikiQA, TrecQA and SQuAD-support as topics, qrels and documents."""
