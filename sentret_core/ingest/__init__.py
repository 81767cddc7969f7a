"""Reading documents and the spaCy pass that turns them into an index (the only spaCy users)."""
