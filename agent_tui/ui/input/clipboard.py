"""What Ctrl+V in the input reads from the system clipboard: an image, else text.

The clipboard is read with the tool the desktop has, as Claude Code reads it:
``wl-paste --list-types`` then ``wl-paste --type TYPE`` on Wayland,
``xclip -selection clipboard -t TARGETS -o`` then ``-t TYPE -o`` on X11 (with
``WAYLAND_DISPLAY`` set, wl-paste is tried first; else xclip). An image type
(PNG first, then JPEG, WebP, GIF) is read as bytes and checked as a pasted image
file is (``files/images.py``: its bytes say its type, at most 5 MB and 8000x8000
pixels); text is handed back to be pasted as the terminal would.

Each tool runs as any command does (``commands/bounded_run.py``: its own group and
cgroup, TERM -> grace -> KILL), for at most :data:`TIMEOUT_S` and
:data:`~agent_tui.files.images.MAX_RAW` bytes: a tool that hangs or floods is ended and said so. No display,
no tool, an empty clipboard or a failing tool each come back as a :class:`ClipNothing`
with what to do; nothing is typed.
"""

from __future__ import annotations

import base64
import os
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, assert_never

from agent_tui.files.images import MAX_ENCODED, MAX_RAW, TYPES_WORDED

if TYPE_CHECKING:
    from agent_tui.protocol import ImageAttachment
    from agent_tui.ui.input.attachments import Attachment

TIMEOUT_S = 3.0  # each run of the tool
MAX_TEXT = 1024 * 1024  # text pasted at most (bytes)
_IMAGE_TYPES = ("image/png", "image/jpeg", "image/jpg", "image/webp", "image/gif", "image/bmp")
_TEXT_TYPES = ("text/plain;charset=utf-8", "UTF8_STRING", "text/plain", "STRING", "TEXT")


@dataclass(frozen=True)
class Tool:
    name: str  # the program
    package: str  # what to install
    list_types: tuple[str, ...]
    read: tuple[str, ...]  # the type goes after it

    def read_argv(self, kind: str) -> list[str]:
        return [self.name, *self.read, kind]


WL_PASTE = Tool("wl-paste", "wl-clipboard", ("--list-types",), ("--no-newline", "--type"))
XCLIP = Tool("xclip", "xclip", ("-selection", "clipboard", "-t", "TARGETS", "-o"),
             ("-selection", "clipboard", "-o", "-t"))


@dataclass(frozen=True)
class ClipImage:
    image: ImageAttachment


@dataclass(frozen=True)
class ClipText:
    text: str


@dataclass(frozen=True)
class ClipNothing:
    why: str  # for the user: what was wrong and what to do


Clip = ClipImage | ClipText | ClipNothing


def tools_for(env: Mapping[str, str]) -> tuple[list[Tool], str | None]:
    """The clipboard tools to try, in order, and why there are none (or None)."""
    wayland, x11 = bool(env.get("WAYLAND_DISPLAY")), bool(env.get("DISPLAY"))
    if not (wayland or x11):
        return [], ("no clipboard to read: neither WAYLAND_DISPLAY nor DISPLAY is set "
                    "(over SSH, paste the image's path instead)")
    order = [WL_PASTE, XCLIP] if wayland else [XCLIP, WL_PASTE]
    path = env.get("PATH", os.defpath)
    found = [tool for tool in order if shutil.which(tool.name, path=path)]
    if not found:
        need = order[0]
        return [], f"no image read: install {need.package} to paste images ({need.name} not found)"
    return found, None


def _image(data: bytes, tool: str) -> ClipImage | ClipNothing:
    from agent_tui.files.images import ImageRefused, check_attachment, sniff_image
    from agent_tui.protocol import ImageAttachment

    shown = "the clipboard's image"
    if len(data) > MAX_RAW:  # also what a flood was cut to
        return ClipNothing(f"{shown} is larger than the {MAX_ENCODED // 2**20} MB the model "
                           "can be sent (not attached)")
    media = sniff_image(data[:16])
    if media is None:
        return ClipNothing(f"{shown} ({tool}) is not {TYPES_WORDED} (not attached)")
    try:
        image = check_attachment(ImageAttachment(media_type=media,
                                                 data=base64.b64encode(data).decode("ascii"), path=shown))
    except ImageRefused as exc:
        return ClipNothing(f"{exc} (not attached)")
    return ClipImage(image)


async def read_clipboard(env: Mapping[str, str] | None = None, timeout_s: float = TIMEOUT_S) -> Clip:
    """The clipboard's image, else its text; or why there is neither."""
    env = os.environ if env is None else env
    tools, why = tools_for(env)
    if why is not None:
        return ClipNothing(why)
    from agent_tui.commands.bounded_run import run_bounded

    failures: list[str] = []
    for tool in tools:
        listed = await run_bounded([tool.name, *tool.list_types], env, timeout_s=timeout_s, limit=64 * 1024)
        if listed.failure is not None:
            failures.append(listed.failure)
            continue
        types = [t.strip() for t in listed.output.decode("utf-8", "replace").splitlines() if t.strip()]
        image = next((t for t in _IMAGE_TYPES if t in types), None)
        text = next((t for t in _TEXT_TYPES if t in types), None)
        if image is None and text is None:
            continue
        kind = image or text or ""
        read = await run_bounded(tool.read_argv(kind), env, timeout_s=timeout_s,
                                 limit=MAX_RAW if image else MAX_TEXT)
        if read.failure is not None:
            failures.append(read.failure)
            continue
        data = read.output
        if image is not None:
            return _image(data, tool.name)
        if len(data) > MAX_TEXT:
            return ClipNothing(f"the clipboard's text is larger than {MAX_TEXT // 1024} KB (not pasted)")
        return ClipText(data.decode("utf-8", "replace"))
    if failures:
        return ClipNothing("could not read the clipboard: " + "; ".join(failures))
    return ClipNothing("no image found in the clipboard")


class _Bar(Protocol):
    items: list[Attachment]

    def add(self, item: Attachment) -> None: ...


class PasteHost(Protocol):
    """What a paste uses of the app: the chips above the input, and the status line."""

    attachment_bar: _Bar

    def notice(self, level: str, text: str) -> None: ...


class _Input(Protocol):
    def insert(self, text: str) -> object: ...


def _attach(prompt: _Input, host: PasteHost, image: ImageAttachment) -> None:
    from agent_tui.ui.input.attachments import clipboard_image

    item = clipboard_image(image, host.attachment_bar.items)
    host.attachment_bar.add(item)  # before the marker: the text's change keeps the chip
    prompt.insert(f"{item.path} ")


async def paste_into(prompt: _Input, host: PasteHost, env: Mapping[str, str] | None = None,
                     timeout_s: float = TIMEOUT_S) -> None:
    """Ctrl+V: the clipboard's image as a chip and its marker at the cursor; its text
    pasted as the terminal pastes it; or why neither, on the status line."""
    match await read_clipboard(env, timeout_s):
        case ClipImage(image):
            _attach(prompt, host, image)
        case ClipText(text):
            if not pasted_image(prompt, host, text):
                prompt.insert(text)
        case ClipNothing(why):
            host.notice("warning", why)
        case never:
            assert_never(never)


def pasted_image(prompt: _Input, host: PasteHost, text: str) -> bool:
    """A terminal's paste that is an image (a ``data:image/...;base64,`` URI) attached
    as one pasted from the clipboard; False for any other text."""
    head, comma, body = text.strip().partition(",")
    if not (comma and head.startswith("data:image/") and head.endswith(";base64")):
        return False
    if len(body) > MAX_ENCODED:  # not decoded: too large either way
        host.notice("warning", f"the pasted image is larger than the {MAX_ENCODED // 2**20} MB the model "
                               "can be sent (not attached)")
        return True
    try:
        data = base64.b64decode(body, validate=True)
    except ValueError:
        host.notice("warning", "the pasted image's data is not valid base64 (not attached)")
        return True
    match _image(data, "pasted"):
        case ClipImage(image):
            _attach(prompt, host, image)
        case ClipNothing(why):
            host.notice("warning", why)
        case never:
            assert_never(never)
    return True
