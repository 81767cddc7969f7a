"""The ``sentret`` command line: one module per command group."""
