"""Learning to rank sentences (issue 12): features, learners, stored rankers and the ``ltr.v1`` scorer."""
