"""Writing the draft in the user's editor (Ctrl+X Ctrl+E): ``$VISUAL``, else
``$EDITOR``, on a private temporary file holding the draft; what the file holds when
the editor exits is the new draft. An editor that cannot be started, or exits with a
failure, leaves the draft as it was and says why."""

from __future__ import annotations

import os
import shlex
import subprocess
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass

MAX_DRAFT_BYTES = 1 << 20  # a draft bigger than this is not read back


@dataclass(frozen=True)
class Edited:
    text: str | None  # the new draft; None: unchanged
    problem: str = ""  # why not, for the user


def editor_command(environ: Mapping[str, str]) -> list[str] | None:
    for name in ("VISUAL", "EDITOR"):
        value = environ.get(name, "").strip()
        if value:
            try:
                return shlex.split(value)
            except ValueError:
                return None
    return None


def edit(draft: str, environ: Mapping[str, str] | None = None, *, attached: bool = True) -> Edited:
    """Run the editor on ``draft`` and wait for it (``attached``: it has the terminal;
    else its input and output go nowhere)."""
    env = os.environ if environ is None else environ
    command = editor_command(env)
    if command is None:
        return Edited(None, "set $VISUAL or $EDITOR to write the message in your editor")
    folder = tempfile.mkdtemp(prefix="agent-tui-draft-")
    path = os.path.join(folder, "message.md")
    try:
        with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w", encoding="utf-8") as fh:
            fh.write(draft)
        quiet = None if attached else subprocess.DEVNULL  # attached: the terminal's own
        try:
            code = subprocess.call([*command, path], env=dict(env), stdin=quiet, stdout=quiet,
                                   stderr=quiet)
        except OSError as exc:
            return Edited(None, f"cannot start the editor {command[0]!r}: {exc.strerror or exc}")
        if code != 0:
            return Edited(None, f"the editor {command[0]!r} exited with code {code}: the draft is unchanged")
        try:
            with open(path, "rb") as fh:
                data = fh.read(MAX_DRAFT_BYTES + 1)
        except OSError as exc:
            return Edited(None, f"cannot read the edited draft: {exc.strerror or exc}")
        if len(data) > MAX_DRAFT_BYTES:
            return Edited(None, "the edited draft is larger than 1 MiB: the draft is unchanged")
        try:
            return Edited(data.decode("utf-8").rstrip("\n"))
        except UnicodeDecodeError:
            return Edited(None, "the edited draft is not UTF-8 text: the draft is unchanged")
    finally:
        for leftover in (path, folder):
            try:
                os.remove(leftover) if leftover == path else os.rmdir(leftover)
            except OSError:
                pass
