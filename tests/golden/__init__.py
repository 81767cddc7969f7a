"""The golden scores: every model's numbers on the small index (make_scores.py writes scores.json)."""
