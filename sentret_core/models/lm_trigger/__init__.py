"""The trained trigger language model (Momtazi & Klakow, IP&M 2015, §5-6, eq. 9-12).

The family together: ``scorer``, the trigger tables it reads (``data``) and ``explain``; importing ``scorer``
registers its models.
"""
