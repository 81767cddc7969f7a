"""Query-likelihood language models for sentences (Fernández et al., Inf. Retr. 2011, §3;
Doko et al., IP&M 2015, eq. 7-8).

The family together: parameters, scoring, scorer and explanation; importing ``scorer`` registers its models.
"""
