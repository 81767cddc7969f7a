"""Training steps that write named artefacts (word classes, trigger tables)."""
