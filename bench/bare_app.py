"""The reference for the terminal figures: a bare Textual app (a header, a log, an
input), started the same way as agent-tui (``python -c`` calling a ``main()``).

For the first frame it only shows itself. For the idle and streaming figures it also
answers what is typed, as the scripted model does: ``stream`` is answered with
``BENCH_STREAM_FILE``'s text, streamed into Textual's own Markdown widget
(``Markdown.get_stream``) ``CHUNK`` characters every ``BENCH_STREAM_DELAY`` seconds;
anything else with one short line.
"""

from __future__ import annotations

import asyncio
import os

from textual.app import App, ComposeResult
from textual.widgets import Header, Input, RichLog

CHUNK = 4  # as the scripted model streams
SHORT_ANSWER = "Hello! What shall we work on?"


class BareApp(App[None]):
    TITLE = "bare"

    def compose(self) -> ComposeResult:
        yield Header()
        yield RichLog()
        yield Input(placeholder="Type a message")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    async def on_input_submitted(self, event: Input.Submitted) -> None:
        from textual.widgets import Markdown

        event.input.value = ""
        answer = Markdown()
        await self.mount(answer, before=event.input)
        if event.value.strip() != "stream":
            await answer.update(SHORT_ANSWER)
            return
        with open(os.environ["BENCH_STREAM_FILE"], encoding="utf-8") as fh:
            text = fh.read()
        delay = float(os.environ.get("BENCH_STREAM_DELAY", "0.002"))
        stream = Markdown.get_stream(answer)
        try:
            for i in range(0, len(text), CHUNK):
                await stream.write(text[i : i + CHUNK])
                await asyncio.sleep(delay)
        finally:
            await stream.stop()


def main() -> int:
    BareApp().run()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
