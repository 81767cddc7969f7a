"""The Streamlit pages. Only this package imports streamlit; pages read widgets, call the library, draw."""
