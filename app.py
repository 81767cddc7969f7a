"""sentret's Streamlit app (`streamlit run app.py`): the navigation lives in the package, sentret_core/ui/main.py."""
from sentret_core.ui.main import run

run()
