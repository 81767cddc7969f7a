"""Query-independent arrays derived from an index: postings (sentence, title and context fields), the
document layout, and vector helpers."""
