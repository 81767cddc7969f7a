"""The package's version, in a module of its own so that any module can read it without importing
``sentret_core/__init__`` (which imports the library); pyproject.toml reads it for the distribution."""

__version__ = "0.1.0"
