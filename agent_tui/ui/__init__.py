"""The Textual front end.

Textual draws at most ``TEXTUAL_FPS`` frames a second (60 by default) and a change
waits for the next frame slot: at 60, a keystroke right after a stream frame waits up
to 17 ms for its echo, idle or not. The stream itself renders only ten times a second,
so a higher cap costs no more frames under load and halves that wait. Set here, before
Textual is first imported (it reads the variable once); a value the user set wins.
"""

import os

os.environ.setdefault("TEXTUAL_FPS", "120")
