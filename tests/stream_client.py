"""A browser's side of Streamlit's websocket protocol, enough to fill in a form and read what the page says.

The app's pages run only for a websocket connection (``/_stcore/stream``), whose handshake is where the
server reads the client's address and headers (``st.context``). A real browser cannot forge
``X-Forwarded-For``; this client sends whatever headers a test gives it, so a test can make the
requests a guesser behind a local forwarder would. It speaks Streamlit's own protobufs: a ``rerun_script``
back message with the widget states, and the ``delta`` forward messages the run draws, until
``script_finished``.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from websockets.sync.client import ClientConnection, connect


@dataclass
class Page:
    """What one run drew: widget ids by label, and the text of every alert and markdown element."""

    inputs: dict[str, str] = field(default_factory=dict)  # text input label -> widget id
    buttons: dict[str, str] = field(default_factory=dict)  # button label -> widget id
    texts: list[str] = field(default_factory=list)

    def says(self, fragment: str) -> bool:
        return any(fragment in text for text in self.texts)


class StreamClient:
    """One connection (one browser tab) to the app at ``url``, on page ``page``, sending ``headers``."""

    def __init__(self, url: str, page: str, headers: Mapping[str, str] | None = None, timeout: float = 60.0) -> None:
        self.page, self.timeout = page, timeout
        address = url.replace("http://", "ws://", 1).rstrip("/") + "/_stcore/stream"
        opened = connect(address, subprotocols=["streamlit"], additional_headers=dict(headers or {}),  # type: ignore[list-item]
                         open_timeout=timeout, max_size=None, proxy=None)
        self.connection: ClientConnection = opened.__enter__()  # as a context manager, the way websockets asks

    def __enter__(self) -> StreamClient:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.connection.__exit__(None, None, None)

    def open(self) -> Page:
        """The page's first run. A fresh server process draws nothing for a page named before its navigation
        has run once (a browser then asks again), so an empty first run is followed by one of the default page."""
        drawn = self.run()
        if not drawn.inputs and not drawn.texts:
            page, self.page = self.page, ""
            self.run()
            self.page = page
            drawn = self.run()
        return drawn

    def run(self, values: Mapping[str, str] | None = None, click: str | None = None, page: Page | None = None) -> Page:
        """Rerun the page with the text inputs labelled in ``values`` set (their ids from ``page``, the run
        before) and the button labelled ``click`` pressed; returns what the run drew."""
        message = BackMsg()
        state = message.rerun_script
        state.page_name = self.page
        for label, value in (values or {}).items():
            assert page is not None and label in page.inputs, (label, page)
            widget = state.widget_states.widgets.add()
            widget.id, widget.string_value = page.inputs[label], value
        if click is not None:
            assert page is not None and click in page.buttons, (click, page)
            widget = state.widget_states.widgets.add()
            widget.id, widget.trigger_value = page.buttons[click], True
        self.connection.send(message.SerializeToString())
        return self._read()

    def _read(self) -> Page:
        drawn = Page()
        deadline = time.monotonic() + self.timeout
        while True:
            data = self.connection.recv(timeout=max(0.1, deadline - time.monotonic()))
            forward = ForwardMsg()
            forward.ParseFromString(data if isinstance(data, bytes) else data.encode())
            kind = forward.WhichOneof("type")
            if kind == "delta" and forward.delta.WhichOneof("type") == "new_element":
                _note(forward.delta.new_element, drawn)
            elif kind == "script_finished" and forward.script_finished != ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                return drawn


def _note(element: Any, drawn: Page) -> None:
    kind = element.WhichOneof("type")
    if kind == "text_input":
        drawn.inputs[element.text_input.label] = element.text_input.id
    elif kind == "button":
        drawn.buttons[element.button.label] = element.button.id
    elif kind == "alert":
        drawn.texts.append(element.alert.body)
    elif kind == "markdown":
        drawn.texts.append(element.markdown.body)
