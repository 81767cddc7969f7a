"""The app's pages: each reads widgets, calls the library and draws."""
