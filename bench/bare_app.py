"""The reference for the first-frame figure: a bare Textual app (a header, a log, an
input), started the same way as agent-tui (``python -c`` calling a ``main()``)."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.widgets import Header, Input, RichLog


class BareApp(App[None]):
    TITLE = "bare"

    def compose(self) -> ComposeResult:
        yield Header()
        yield RichLog()
        yield Input(placeholder="Type a message")

    def on_mount(self) -> None:
        self.query_one(Input).focus()


def main() -> int:
    BareApp().run()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
