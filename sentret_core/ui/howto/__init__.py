"""The parts of the How it works page (sentret_core.ui.pages.howto): computations, controls, views."""
