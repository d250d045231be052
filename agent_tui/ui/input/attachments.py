"""Files and folders attached to a message with ``@``.

A chosen file shows as a chip above the input while its ``@path`` mention stays in
the text (delete the mention and the chip goes). A path with spaces is written as a
shell would: the picker escapes them (``@my\\ notes/plan.txt``), and a quoted mention
(``@"my notes/plan.txt"``) reads the same. When the message is sent, each one
still mentioned is read again (inside the workspace only, symlinks checked) and
added after the message, so the model sees the file as it is then::

    look at @src/app.py

    <file path="src/app.py">
    ...
    </file>

A folder (``@src/``) adds its listing. An image (PNG, JPEG, GIF, WebP, known by its
bytes) goes as an image block beside the text (:func:`images`), read and capped as
``read_file`` and a pasted image path are (``files/images.py``). Refused, with the
reason: a file larger than ``MAX_FILE_BYTES``, another binary file (a NUL byte, or not
UTF-8), an image the model cannot be sent (too large, or of another type), anything
outside the workspace. The transcript shows the message with its attachments folded
to one line each (:func:`split_for_display`).

An image pasted from the clipboard (Ctrl+V, ``ui/input/clipboard.py``) is held as
data, checked when pasted, and named in the text as Claude Code names it,
``[Image #1]``: its chip stays while that marker does (:func:`clipboard_image`,
:func:`kept`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, TypeVar

from agent_tui.files import shell_words
from agent_tui.files.images import SNIFF_BYTES, ImageRefused, attachment_from, probe, sniff_image
from agent_tui.units import format_bytes

if TYPE_CHECKING:
    from agent_tui.protocol import ImageAttachment
    from agent_tui.files.workspace import Workspace, WorkspaceError

# The workspace reader (and pydantic, which it uses) is imported by what reads a file:
# the attachment bar of the first frame only shows marks.

MAX_FILE_BYTES = 256 * 1024
MAX_FOLDER_ENTRIES = 500
# Images of types the model is not sent: refused as such, not read as text.
OTHER_IMAGE_SUFFIXES = frozenset({".bmp", ".tif", ".tiff", ".ico", ".heic", ".avif"})
IMAGE_MARK = "▧"
T = TypeVar("T")
# ``@path``; a path with spaces written as a shell would: ``@my\\ file.txt``, ``@"my file.txt"``
_MENTION = re.compile(rf"(?:^|(?<=\s))@(?:{shell_words.quoted()}|{shell_words.bare()})")
_BLOCK = re.compile(r'\n\n<(file|folder|resource) (?:path|uri)="([^"\n]*)">\n(.*?)\n</\1>'
                    r'(?=\n\n<(?:file|folder|resource) |\Z)', re.DOTALL)


class AttachmentKind(StrEnum):
    FILE = "file"
    FOLDER = "folder"
    IMAGE = "image"
    RESOURCE = "resource"  # an MCP server's resource, @server:uri (ui/input/mcp_offers.py)


@dataclass(frozen=True)
class Attachment:
    kind: AttachmentKind
    path: str  # as mentioned: relative to the workspace, a folder ends with "/"
    size: str  # "2.1 KB", "12 entries", "image/png, 12 KiB"
    data: ImageAttachment | None = None  # a pasted image's bytes; ``path`` is its marker


def clipboard_image(image: ImageAttachment, attached: list[Attachment]) -> Attachment:
    """A pasted image as an attachment, named by the next free ``[Image #N]``."""
    taken = {item.path for item in attached}
    number = next(n for n in range(1, len(taken) + 2) if f"[Image #{n}]" not in taken)
    marker = f"[Image #{number}]"
    return Attachment(AttachmentKind.IMAGE, marker, f"{image.media_type}, {format_bytes(image.size)}",
                      image.model_copy(update={"path": marker}))


def kept(text: str, attached: list[Attachment]) -> list[Attachment]:
    """The attachments ``text`` still names (an ``@`` mention, or a pasted image's marker)."""
    named = mentions(text)
    return [item for item in attached if (item.path in text if item.data else item.path in named)]


class AttachmentRefused(Exception):
    """The file cannot be attached; the message says why, for the user."""


def mentions(text: str) -> set[str]:
    """The paths ``text`` mentions, unquoted and unescaped."""
    return {shell_words.word(m) for m in _MENTION.finditer(text)}


def mention(path: str) -> str:
    """How the picker writes ``path`` (spaces escaped, so that it reads back whole)."""
    return f"@{shell_words.escape(path)}"


def _refused(path: str, exc: WorkspaceError | ImageRefused | OSError) -> AttachmentRefused:
    from agent_tui.files.workspace import FileTooLarge, WorkspaceError

    if isinstance(exc, FileTooLarge):
        return AttachmentRefused(f"{path}: larger than {format_bytes(MAX_FILE_BYTES)} (not attached)")
    if isinstance(exc, ImageRefused):
        return AttachmentRefused(f"{exc} (not attached)")
    if isinstance(exc, WorkspaceError):
        return AttachmentRefused(f"{path}: {exc}")
    return AttachmentRefused(f"{path}: {exc.strerror or exc}")


def _with_file(workspace: Workspace, path: str, read: Callable[[BinaryIO], T]) -> T:
    """``read`` on the workspace's file ``path``; what goes wrong, as a refusal."""
    from agent_tui.files.workspace import WorkspaceError

    try:
        with workspace.open_read(path) as fh:
            return read(fh)
    except (WorkspaceError, ImageRefused, OSError) as exc:
        raise _refused(path, exc) from None


def _read_text(workspace: Workspace, path: str) -> str:
    from agent_tui.files.workspace import WorkspaceError

    if Path(path).suffix.lower() in OTHER_IMAGE_SUFFIXES:
        raise AttachmentRefused(f"{path}: an image the model cannot be sent "
                                "(PNG, JPEG, GIF and WebP can; not attached)")
    try:
        data = workspace.read_bytes(path, limit=MAX_FILE_BYTES)
    except (WorkspaceError, OSError) as exc:
        raise _refused(path, exc) from None
    if b"\0" in data[:8192]:
        raise AttachmentRefused(f"{path}: a binary file (not attached)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise AttachmentRefused(f"{path}: a binary file (not UTF-8 text; not attached)") from None


def check(root: Path, path: str, listing: Callable[[str], list[str]]) -> Attachment:
    """Whether ``path`` can be attached now (raises :class:`AttachmentRefused`)."""
    from agent_tui.files.workspace import Workspace

    workspace = Workspace(root)
    if path.endswith("/"):
        entries = listing(path)
        return Attachment(AttachmentKind.FOLDER, path, f"{len(entries)} entries")
    if _with_file(workspace, path, lambda fh: sniff_image(fh.read(SNIFF_BYTES)) is not None):
        media, size = _with_file(workspace, path, lambda fh: probe(fh, path))
        return Attachment(AttachmentKind.IMAGE, path, f"{media}, {format_bytes(size)}")
    text = _read_text(workspace, path)
    return Attachment(AttachmentKind.FILE, path, format_bytes(len(text.encode("utf-8"))))


def expand(text: str, attached: list[Attachment], root: Path, listing: Callable[[str], list[str]]) -> str:
    """``text`` with every attachment it still mentions added after it, read now."""
    from agent_tui.files.workspace import Workspace

    named = mentions(text)
    workspace = Workspace(root)
    blocks = []
    for item in attached:
        if item.path not in named or item.kind is AttachmentKind.IMAGE:
            continue  # images go beside the text (images())
        if item.kind is AttachmentKind.FOLDER:
            entries = listing(item.path)
            body = "\n".join(e.removeprefix(item.path) for e in entries[:MAX_FOLDER_ENTRIES])
            if len(entries) > MAX_FOLDER_ENTRIES:
                body += f"\n… and {len(entries) - MAX_FOLDER_ENTRIES} more"
            blocks.append(f'<folder path="{item.path}">\n{body}\n</folder>')
        else:
            content = _read_text(workspace, item.path)
            blocks.append(f'<file path="{item.path}">\n{content.rstrip(chr(10))}\n</file>')
    if not blocks:
        return text
    return text.rstrip() + "\n\n" + "\n\n".join(blocks)


def images(text: str, attached: list[Attachment], root: Path) -> list[ImageAttachment]:
    """The attached images ``text`` still mentions, read now (raises
    :class:`AttachmentRefused` as :func:`expand` does)."""
    from agent_tui.files.workspace import Workspace

    workspace = Workspace(root)
    return [item.data or _with_file(workspace, item.path, functools.partial(attachment_from, shown=item.path))
            for item in kept(text, attached) if item.kind is AttachmentKind.IMAGE]


@dataclass(frozen=True)
class Shown:
    kind: AttachmentKind
    path: str
    lines: int


def split_for_display(text: str) -> tuple[str, list[Shown]]:
    """A sent message: what the user wrote, and the attachments added after it."""
    first = _BLOCK.search(text)
    if first is None:
        return text, []
    shown = [Shown(AttachmentKind(m[1]), m[2], m[3].count("\n") + 1)
             for m in _BLOCK.finditer(text, first.start())]
    return text[: first.start()], shown
