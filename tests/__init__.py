"""The tests, mirroring sentret_core/ (tests/README.md)."""
