"""Learning to rank sentences: features, learners, stored rankers and the ``ltr.v1`` scorer."""
