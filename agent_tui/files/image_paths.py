"""Image files a user's message names: found in its text as a terminal pastes them,
read as attachments for the model.

A path counts when it ends in an image-like suffix and names an existing file:
absolute, ``~/``, ``file://``, or relative to the workspace; bare with its spaces
escaped (``Screen\\ Shot.png``, as a dragged file is pasted) or quoted. A path that
names nothing is only text (``fix logo.png handling``). One that names a file the
model cannot be sent (too large, not a PNG/JPEG/GIF/WebP, unreadable) is refused with
the reason. ``@path`` mentions are the ``@`` picker's (``ui/input/attachments.py``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, TypeVar
from urllib.parse import unquote

from agent_tui.protocol.ops import FollowUp, ImageAttachment, SendNow, UserMessage
from agent_tui.files.images import ImageRefused, attachment_from, check_attachment, probe
from agent_tui.files.shell_words import bare, quoted, word

MAX_IMAGES = 20  # per message (the API takes more per request, but not unbounded)
# Tried as images; the last four are refused with the reason (not a type the API takes).
_SUFFIX = r"\.(?:png|jpe?g|gif|webp|bmp|tiff?|heic|avif)"
_END = r"(?=$|[\s,;:!?)\]}>]|\.(?:\s|$))"  # trailing punctuation is not the path's
_BARE = bare(_SUFFIX, not_first=r"'\"@(\[<", not_after=r"'\"")  # as a terminal pastes it
_PATH = re.compile(
    rf"{quoted(_SUFFIX)}|(?:^|(?<=[\s(\[<])){_BARE}{_END}", re.IGNORECASE | re.MULTILINE
)
T = TypeVar("T")


@dataclass(frozen=True)
class Named:
    """An image file the text names: as written (unescaped), and where it is."""

    shown: str
    path: Path


@dataclass(frozen=True)
class Probed:
    shown: str
    media_type: str
    size: int


@dataclass
class Found:
    images: list[ImageAttachment] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  # each: "PATH: why"


def named_files(text: str, cwd: Path) -> list[Named]:
    """The existing files ``text`` names with an image-like suffix, each once, in order."""
    seen: set[str] = set()
    named: list[Named] = []
    for match in _PATH.finditer(text):
        shown = word(match)
        raw = unquote(shown[len("file://"):]) if shown.startswith("file://") else shown
        path = Path(os.path.expanduser(raw))
        if not path.is_absolute():
            path = cwd / path
        try:
            if not path.is_file():
                continue
            key = os.path.realpath(path)
        except OSError:  # a name too long, a loop of links: not a file named here
            continue
        if key not in seen:
            seen.add(key)
            named.append(Named(shown, path))
    return named


def _each(text: str, cwd: Path, load: Callable[[BinaryIO, str], T]) -> tuple[list[T], list[str]]:
    """``load`` run on each image file ``text`` names; and the refusals, with why."""
    done: list[T] = []
    refused: list[str] = []
    for item in named_files(text, cwd):
        if len(done) >= MAX_IMAGES:
            refused.append(f"{item.shown}: more than {MAX_IMAGES} images in one message")
            continue
        try:
            with open(item.path, "rb") as fh:
                done.append(load(fh, item.shown))
        except ImageRefused as exc:
            refused.append(str(exc))
        except OSError as exc:
            refused.append(f"{item.shown}: cannot be read ({exc.strerror or exc})")
    return done, refused


def find_images(text: str, cwd: Path) -> Found:
    """The images ``text`` names, read now to be sent, and those refused (why)."""
    return Found(*_each(text, cwd, attachment_from))


def preview_images(text: str, cwd: Path) -> tuple[list[Probed], list[str]]:
    """What a message being written would attach, from each file's first bytes only
    (cheap enough for every change of the input), and what it would refuse."""
    def look(fh: BinaryIO, shown: str) -> Probed:
        media, size = probe(fh, shown)
        return Probed(shown, media, size)

    return _each(text, cwd, look)


MessageOp = TypeVar("MessageOp", UserMessage, FollowUp, SendNow)


def attach_named(op: MessageOp, cwd: Path) -> tuple[MessageOp, list[str]]:
    """``op`` with the images its text names added after those it carries, and what
    was refused (sent without). An image it carries as data that is not what it says
    raises :class:`ImageRefused`: the message is not sent (the journal would keep it,
    and the API refuse every request after)."""
    given: list[ImageAttachment] = [check_attachment(image) for image in op.images]
    found: Found = find_images(op.text, cwd)
    return op.model_copy(update={"images": [*given, *found.images]}), found.refused
