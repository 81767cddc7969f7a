"""The class-based language model (Momtazi & Klakow, IP&M 2015, §3, eq. 5-6).

One module, ``scorer``: the formula and its explanation; importing it registers the model.
"""
