"""The user's ``~/.claude/keybindings.json`` (Claude Code's format), mapped onto our keys.

The file is ``{"bindings": [{"context": "Chat", "bindings": {"ctrl+e":
"chat:externalEditor", "ctrl+u": null}}]}``: per context, keys to Claude Code's actions
(``null`` unbinds). :func:`read_keybindings` turns it into :class:`KeyMap`: the
bindings agent-tui honours (each a Textual key, the app's or the input's action) and,
one line each, those it cannot, with the reason. Nothing is half applied: a binding is
in force or named.

A chord is keys pressed one after another, written with spaces (``"ctrl+k ctrl+s"``);
they are :class:`ChordBinding` s, run by ``ui/input/chords.py``. Its first key then
waits for the next one (3 s, as Claude Code), whatever that key did before: such a
shadowed key, and a key bound twice in one context, are named in
:attr:`KeyMap.warnings` (in force, but maybe not what the user meant). A chord may not
begin with a key the input types (a letter, Space) nor hold Esc, Ctrl+C or Ctrl+Q.

The stop and quit keys are not the file's to take: Esc (interrupt), Ctrl+C and Ctrl+Q
keep their jobs whatever it says. Keys the input handles itself before any binding
(Enter, Ctrl+J, Ctrl+F, Ctrl+G, Up, Down, Page Up/Down, Ctrl+X) cannot be given another
action either.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from textual.binding import Binding

from agent_tui.config_file import read_config
from agent_tui.paths import claude_config_dir

MAX_FILE_BYTES = 256 * 1024

# Claude Code's action -> (whose: "app" or "input", our action, what it does).
ACTIONS: dict[str, tuple[str, str, str]] = {
    "app:interrupt": ("app", "interrupt", "interrupt the running turn"),
    "app:exit": ("app", "quit_soon", "quit"),
    "app:toggleTranscript": ("app", "toggle_last_output", "show or hide the latest tool output"),
    "chat:submit": ("input", "submit", "send the message"),
    "chat:newline": ("input", "newline", "new line in the input"),
    "chat:cycleMode": ("app", "cycle_mode", "the next permission mode"),
    "chat:externalEditor": ("input", "external_editor", "write the message in $EDITOR"),
    "chat:undo": ("input", "undo", "undo the last edit in the input"),
    "chat:imagePaste": ("input", "paste_image", "paste an image from the clipboard"),
}
CONTEXTS = ("Global", "Chat")  # the contexts whose actions we have
KEPT_KEYS = {"escape": "Esc stays the stop key", "ctrl+c": "Ctrl+C stays the quit key",
             "ctrl+q": "Ctrl+Q stays the quit key"}
INPUT_OWN_KEYS = ("enter", "ctrl+j", "shift+enter", "ctrl+f", "alt+enter", "ctrl+g",
                  "ctrl+enter", "up", "down", "pageup", "pagedown", "ctrl+x")
NAMED_KEYS = {"esc": "escape", "escape": "escape", "return": "enter", "enter": "enter", "space": "space", "tab": "tab",
              "backspace": "backspace", "delete": "delete", "pageup": "pageup",
              "pagedown": "pagedown", "up": "up", "down": "down", "left": "left",
              "right": "right", "home": "home", "end": "end"}
MODIFIERS = {"ctrl": "ctrl", "control": "ctrl", "alt": "alt", "meta": "alt", "opt": "alt",
             "option": "alt", "shift": "shift"}


@dataclass(frozen=True)
class KeyBinding:
    key: str  # Textual's name
    whose: str  # "app" or "input"
    action: str
    what: str
    written: str  # as the file has it


@dataclass(frozen=True)
class ChordBinding:
    keys: tuple[str, ...]  # Textual's names, two or more
    whose: str  # "app" or "input"
    action: str
    what: str
    written: str


@dataclass
class KeyMap:
    file: Path | None = None
    bindings: list[KeyBinding] = field(default_factory=list)
    chords: list[ChordBinding] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  # "Chat ctrl+s → chat:stash: why"
    warnings: list[str] = field(default_factory=list)  # taken, but it shadows something


def chord_keys(written: str) -> tuple[str, ...] | None:
    """A chord as Textual's keys (``"ctrl+k ctrl+s"`` -> ``("ctrl+k", "ctrl+s")``); None
    when one of its keys is not one Textual can tell."""
    keys = [textual_key(part) for part in written.split()]
    if not keys or None in keys:
        return None
    return tuple(k for k in keys if k is not None)


def textual_key(written: str) -> str | None:
    """Claude Code's key (``ctrl+e``, ``meta+p``, ``shift+tab``) as Textual names it;
    None for what Textual cannot tell (a chord, an unknown name)."""
    parts = [p for p in written.strip().lower().split("+") if p]
    if not parts or " " in written.strip():
        return None
    *mods, base = parts
    if any(m not in MODIFIERS for m in mods):
        return None
    if len(base) == 1 and base.isalnum():
        name = base
    elif base in NAMED_KEYS:
        name = NAMED_KEYS[base]
    elif base.startswith("f") and base[1:].isdigit():
        name = base
    else:
        return None
    ordered = [m for m in ("ctrl", "alt", "shift") if m in {MODIFIERS[x] for x in mods}]
    return "+".join([*ordered, name])


def read_keybindings(path: Path | None = None) -> KeyMap:
    """The file's bindings, honoured or named; a missing file is no bindings."""
    path = path or claude_config_dir() / "keybindings.json"
    keymap = KeyMap(file=path)
    try:
        raw = read_config(path, limit=MAX_FILE_BYTES)  # bounded: never a FIFO's wait
    except FileNotFoundError:
        keymap.file = None
        return keymap
    except OSError as exc:
        keymap.refused.append(f"{path}: cannot read: {exc.strerror or exc}")
        return keymap
    try:
        if len(raw) > MAX_FILE_BYTES:
            raise ValueError(f"larger than {MAX_FILE_BYTES // 1024} KiB")
        data = json.loads(raw, object_pairs_hook=lambda pairs: _pairs(keymap, pairs))
        blocks = data["bindings"] if isinstance(data, dict) else None
        if not isinstance(blocks, list):
            raise ValueError('no "bindings" list')
    except (ValueError, KeyError, RecursionError) as exc:
        keymap.refused.append(f"{path}: not read: {exc}")
        return keymap
    for block in blocks:
        _block(keymap, block)
    _shadowed(keymap)
    return keymap


def _pairs(keymap: KeyMap, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object, its keys written twice named (JSON keeps only the last one)."""
    seen: set[str] = set()
    for key, _value in pairs:
        if key in seen:
            keymap.warnings.append(f"{key} is written twice in one block: only the last one counts")
        seen.add(key)
    return dict(pairs)


def _block(keymap: KeyMap, block: Any) -> None:
    if not isinstance(block, dict) or not isinstance(block.get("bindings"), dict):
        keymap.refused.append(f"a block that is not {{\"context\", \"bindings\"}}: {str(block)[:80]}")
        return
    context = str(block.get("context", ""))
    for written, action in block["bindings"].items():
        why = _refusal(context, str(written), action)
        if why is not None:
            keymap.refused.append(f"{context} {written} → {action}: {why}")
            continue
        whose, ours, what = ACTIONS[str(action)]
        keys = chord_keys(str(written))
        assert keys is not None  # _refusal checked it
        _drop(keymap, keys, context, str(action))
        if len(keys) == 1:
            keymap.bindings.append(KeyBinding(keys[0], whose, ours, what, str(written)))
        else:
            keymap.chords.append(ChordBinding(keys, whose, ours, what, str(written)))


def _drop(keymap: KeyMap, keys: tuple[str, ...], context: str, action: str) -> None:
    """The keys' earlier binding goes (the last one wins), named if it differed."""
    before = [b for b in keymap.bindings if (b.key,) == keys] + [
        c for c in keymap.chords if c.keys == keys]
    for old in before:
        if old.action != ACTIONS[action][1]:
            keymap.warnings.append(f"{context} {' '.join(keys)} is bound twice: {action} "
                                   f"wins over the earlier {old.written!r} ({old.what})")
    keymap.bindings = [b for b in keymap.bindings if (b.key,) != keys]
    keymap.chords = [c for c in keymap.chords if c.keys != keys]


def _shadowed(keymap: KeyMap) -> None:
    """Name each key a chord's start takes from what it did (the key waits for the next one)."""
    from agent_tui.ui.input.keys import APP_BINDINGS, INPUT_BINDINGS

    builtin = {one: b.description or b.action for b in [*APP_BINDINGS, *INPUT_BINDINGS]
               if isinstance(b, Binding) for one in b.key.split(",")}
    for chord in keymap.chords:
        for n in range(1, len(chord.keys)):
            start = chord.keys[:n]
            yours = [b for b in keymap.bindings if (b.key,) == start] + [
                c for c in keymap.chords if c.keys == start]
            for old in yours:
                keymap.warnings.append(f"{old.written} → {old.what} is never reached: "
                                       f"it begins the chord {chord.written}")
            if n == 1 and not yours and start[0] in builtin:
                keymap.warnings.append(f"{start[0]} no longer does {builtin[start[0]]}: it "
                                       f"begins the chord {chord.written}")


def _refusal(context: str, written: str, action: Any) -> str | None:
    if context not in CONTEXTS:
        return f"agent-tui has no {context or 'unnamed'} context (only {', '.join(CONTEXTS)})"
    keys = chord_keys(written)
    if keys is None:
        return "a key agent-tui cannot tell apart (an unknown name)"
    if len(keys) > 1:
        return _chord_refusal(keys, action)
    key = keys[0]
    if key in KEPT_KEYS:
        return KEPT_KEYS[key]
    if action is None:
        return "unbinding is not supported: the key keeps its job"
    if key in INPUT_OWN_KEYS:
        return "the input handles this key itself"
    if not isinstance(action, str) or action not in ACTIONS:
        return "an action agent-tui does not have"
    return None


def _chord_refusal(keys: tuple[str, ...], action: Any) -> str | None:
    kept = next((k for k in keys if k in KEPT_KEYS), None)
    if kept is not None:
        return f"{KEPT_KEYS[kept]} (Esc cancels a chord)" if kept == "escape" else KEPT_KEYS[kept]
    if keys[0] in INPUT_OWN_KEYS:
        return "the input handles its first key itself"
    if _typed(keys[0]):
        return "its first key types a character: it would be taken from your typing"
    if action is None:
        return "unbinding is not supported: a chord agent-tui has none of"
    if not isinstance(action, str) or action not in ACTIONS:
        return "an action agent-tui does not have"
    return None


def _typed(key: str) -> bool:
    """Whether the key types into the input (no Ctrl or Alt with it)."""
    *mods, base = key.split("+")
    return not {"ctrl", "alt"} & set(mods) and (len(base) == 1 or base in ("space", "tab"))


#: What a key did on a node before the user's file bound it: (node, key) -> its bindings
#: (None: nothing), so a reloaded file can give it back.
Saved = dict[tuple[int, str], tuple[Any, list[Any] | None]]


def restore_keys(saved: Saved) -> None:
    """Undo :func:`apply_keymap`: every key it bound does what it did before."""
    for (_node_id, key), (node, before) in saved.items():
        if before is None:
            node._bindings.key_to_bindings.pop(key, None)
        else:
            node._bindings.key_to_bindings[key] = before
    saved.clear()


def apply_keymap(keymap: KeyMap, app: Any, prompt: Any, saved: Saved | None = None) -> None:
    """Bind the honoured keys: the app's actions on the app, the input's on the input
    (each replacing what the key did there; ``saved`` keeps what that was). Chords are
    not bound here: ``ui/input/chords.py`` sees the keys before any binding does."""
    def keep(node: Any, key: str) -> None:
        if saved is not None and (id(node), key) not in saved:
            before = node._bindings.key_to_bindings.get(key)
            saved[(id(node), key)] = (node, list(before) if before is not None else None)

    # The input's keys act in its own key handler, in order with the characters typed
    # around them (a binding resolves once the key has bubbled up: after them).
    prompt.user_keys = {b.key: b.action for b in keymap.bindings
                        if b.whose != "app" and not _typed(b.key)}
    for binding in keymap.bindings:
        node = app if binding.whose == "app" else prompt
        keep(node, binding.key)
        if binding.whose == "app":
            keep(prompt, binding.key)
        node._bindings.key_to_bindings[binding.key] = [
            Binding(binding.key, binding.action, binding.what, show=False)]
        if binding.whose == "app":  # the input's own binding of the key would come first
            prompt._bindings.key_to_bindings.pop(binding.key, None)
