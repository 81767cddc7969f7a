"""The TF-ISF family (Fernández et al., Inf. Retr. 2011; Doko et al., IP&M 2015; Doko et al. 2013).

The family together: formulas, scorer and explanation; importing ``scorer`` registers its models.
"""
