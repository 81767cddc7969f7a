"""The parts of the Annotate page (sentret_core.ui.pages.annotate): sign-in, actions, the item, shortcuts."""
