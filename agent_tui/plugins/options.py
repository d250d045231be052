"""A plugin's options (its manifest's ``userConfig``), as Claude Code defines them: the
fields, their values, and where the values are kept.

A field is ``{"type": "string"|"number"|"boolean"|"directory"|"file", "title",
"description", "required"?, "default"?, "multiple"?, "sensitive"?, "min"?, "max"?,
"options"?}`` (a strict object: an unknown key makes the manifest unusable, as in
Claude Code); its key is an identifier (it becomes ``CLAUDE_PLUGIN_OPTION_<KEY>``).

Values are only ever the user's: a plain one in the user's Claude Code settings
(``~/.claude/settings.json`` ``pluginConfigs[PLUGIN@MARKETPLACE].options``, where
Claude Code keeps it, so a value set there works unchanged), a sensitive one in
agent-tui's state (``plugin-secrets.json``, 0600, never in a settings file a project
or a backup of the settings can read). A sensitive value agent-tui does not have is
read from where Claude Code kept it (``claude_secrets.py``; never written there). A
project's settings are never read for them.
"""

from __future__ import annotations

import json
import math
import re
from enum import StrEnum
from pathlib import Path
from typing import Any

from pydantic import ConfigDict, ValidationError, model_validator

from agent_tui.protocol.model_base import DeferredModel
from agent_tui.atomic import write_atomic
from agent_tui.paths import private_dir, state_home
from agent_tui.plugins.claude_secrets import claude_secrets
from agent_tui.plugins.records import RecordError, Records, read_object
from agent_tui.yes_no import yes_no

KEY_OK = re.compile(r"^[A-Za-z_]\w*$", re.ASCII)
PLACEHOLDER = re.compile(r"\$\{user_config\.([^}]+)\}")  # where a text names an option
SECRETS_FILE = "plugin-secrets.json"
MAX_VALUE_CHARS = 4096
Value = str | int | float | bool | list[str]


class OptionType(StrEnum):
    STRING = "string"
    NUMBER = "number"
    BOOLEAN = "boolean"
    DIRECTORY = "directory"
    FILE = "file"


class OptionField(DeferredModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    type: OptionType
    title: str
    description: str
    required: bool = False
    default: Value | None = None
    multiple: bool = False
    sensitive: bool = False
    min: float | None = None
    max: float | None = None
    options: tuple[str, ...] | None = None

    @model_validator(mode="after")
    def _choices(self) -> OptionField:
        if self.options is None:
            return self
        if self.type is not OptionType.STRING or self.multiple or self.sensitive:
            raise ValueError('options is only for a field of type "string" that is neither '
                             "multiple nor sensitive")
        if not self.options or len({o.lower() for o in self.options}) != len(self.options):
            raise ValueError("options needs at least one value, none repeated")
        if self.default is None and not self.required:
            raise ValueError("a field with options needs a default among them, or required: true")
        if self.default is not None and self.default not in self.options:
            raise ValueError(f"default must be one of the options: {', '.join(self.options)}")
        return self


Schema = dict[str, OptionField]


def read_user_config(data: Any, where: str) -> Schema:
    """The manifest's ``userConfig``; raises ValueError (the plugin is not loaded)."""
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ValueError(f"{where}: userConfig: expected an object of options")
    schema: Schema = {}
    for key, raw in data.items():
        if not KEY_OK.match(key):
            raise ValueError(f"{where}: userConfig: {key!r}: option keys are identifiers "
                              "(letters, digits, '_'; no leading digit)")
        try:
            schema[key] = OptionField.model_validate(raw)
        except ValidationError as exc:
            first = exc.errors()[0]
            at = ".".join(str(p) for p in first["loc"])
            raise ValueError(f"{where}: userConfig.{key}{'.' + at if at else ''}: "
                              f"{first['msg']}") from None
    return schema


def parse_value(field: OptionField, text: str) -> Value:
    """A value typed by the user, checked against its field; raises ValueError."""
    text = text.strip()
    if len(text) > MAX_VALUE_CHARS or any(ord(c) < 32 for c in text):
        raise ValueError(f"at most {MAX_VALUE_CHARS} characters, no control characters")
    match field.type:
        case OptionType.BOOLEAN:
            if (answer := yes_no(text)) is None:
                raise ValueError("expected true or false")
            return answer
        case OptionType.NUMBER:
            try:
                number = float(text)
            except ValueError:
                raise ValueError("expected a number") from None
            if not math.isfinite(number):
                raise ValueError("expected a number")
            check_value(field, number)
            return int(number) if number.is_integer() else number
        case OptionType.STRING | OptionType.DIRECTORY | OptionType.FILE:
            value: Value = [p.strip() for p in text.split(",") if p.strip()] if field.multiple else text
            check_value(field, value)
            return value
        case _:
            raise ValueError(f"unknown type {field.type}")


def check_value(field: OptionField, value: Any) -> None:
    """Raises ValueError when ``value`` does not fit ``field``."""
    if value is None or value == "" or value == []:
        if field.required:
            raise ValueError("required")
        return
    match field.type:
        case OptionType.BOOLEAN:
            ok = isinstance(value, bool)
        case OptionType.NUMBER:
            ok = isinstance(value, int | float) and not isinstance(value, bool)
            if ok and field.min is not None and value < field.min:
                raise ValueError(f"must be at least {field.min:g}")
            if ok and field.max is not None and value > field.max:
                raise ValueError(f"must be at most {field.max:g}")
        case _:
            ok = isinstance(value, str) or (
                field.multiple and isinstance(value, list) and all(isinstance(v, str) for v in value))
    if not ok:
        raise ValueError(f"expected a {field.type.value}{' list' if field.multiple else ''}")
    texts = value if isinstance(value, list) else [value] if isinstance(value, str) else []
    if any("\x00" in t or len(t) > MAX_VALUE_CHARS for t in texts):
        raise ValueError(f"at most {MAX_VALUE_CHARS} characters, no NUL")
    if field.options is not None and value not in field.options:
        raise ValueError(f"must be one of {', '.join(field.options)}")


def secrets_path() -> Path:
    return state_home() / SECRETS_FILE


def _secrets() -> dict[str, Any]:
    return read_object(secrets_path())


def stored_values(plugin_id: str, schema: Schema, records: Records | None = None) -> dict[str, Value]:
    """The values in force: the defaults, then the user's settings (plain fields only),
    then agent-tui's secrets file, else Claude Code's (sensitive fields only). Keys not in ``schema`` are
    left out; a stored value that does not fit its field counts as unset."""
    records = records or Records()
    values: dict[str, Value] = {k: f.default for k, f in schema.items() if f.default is not None}
    try:
        plain = _table(records.settings().get("pluginConfigs"), plugin_id, "options")
    except RecordError:
        plain = {}
    try:
        secret = _table(_secrets(), plugin_id)
    except RecordError:
        secret = {}
    try:  # what Claude Code kept, where agent-tui has none
        theirs = claude_secrets(records.claude_dir, plugin_id) if _any_sensitive(schema) else {}
    except RecordError:
        theirs = {}
    for key, field in schema.items():
        value = (secret if field.sensitive else plain).get(key)
        if value is None and field.sensitive and isinstance(theirs.get(key), str):
            value = _from_text(field, theirs[key])
        try:
            check_value(field, value)
        except ValueError:
            continue
        if value is not None:
            values[key] = value
    return values


def _any_sensitive(schema: Schema) -> bool:
    return any(f.sensitive for f in schema.values())


def _from_text(field: OptionField, text: str) -> Value | None:
    """A value Claude Code kept as text (its secure storage holds ``String(value)``)."""
    try:
        return parse_value(field, text)
    except ValueError:
        return None


def _table(data: Any, *keys: str) -> dict[str, Any]:
    for key in keys:
        data = data.get(key) if isinstance(data, dict) else None
    return data if isinstance(data, dict) else {}


def unset(schema: Schema, values: dict[str, Value]) -> list[str]:
    """The required fields without a value."""
    return [k for k, f in schema.items() if f.required and values.get(k) in (None, "", [])]


def save_values(plugin_id: str, schema: Schema, given: dict[str, Value],
                records: Records | None = None) -> None:
    """Keeps ``given`` (checked values of ``schema``'s keys): plain ones in the user's
    settings, sensitive ones in the 0600 secrets file (and never both)."""
    records = records or Records()
    plain = {k: v for k, v in given.items() if not schema[k].sensitive}
    secret = {k: v for k, v in given.items() if schema[k].sensitive}
    data = records.settings()
    configs = data.get("pluginConfigs") if isinstance(data.get("pluginConfigs"), dict) else {}
    assert isinstance(configs, dict)
    entry = configs.get(plugin_id) if isinstance(configs.get(plugin_id), dict) else {}
    assert isinstance(entry, dict)
    options = {k: v for k, v in _table(entry, "options").items() if k not in secret}
    if plain or len(options) != len(_table(entry, "options")):
        configs[plugin_id] = {**entry, "options": {**options, **plain}}
        data["pluginConfigs"] = configs
        records.write_settings(data)
    if secret:
        secrets = _secrets()
        secrets[plugin_id] = {**_table(secrets, plugin_id), **secret}
        folder = private_dir(state_home())
        write_atomic(folder, SECRETS_FILE, (json.dumps(secrets, indent=2) + "\n").encode(),
                     mode=0o600, exact_mode=True)


def shown(field: OptionField, value: Value | None) -> str:
    """A value as it may be printed: a sensitive one never."""
    if value is None or value == "":
        return "(not set)"
    if field.sensitive:
        return "(set, hidden)"
    return ", ".join(value) if isinstance(value, list) else as_text(value)


def as_text(value: Value) -> str:
    """A value as Claude Code turns it into text (JavaScript's ``String(value)``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, list):
        return ",".join(value)
    return str(value)


def option_env(values: dict[str, Value]) -> dict[str, str]:
    """``CLAUDE_PLUGIN_OPTION_<KEY>`` for a plugin's hooks, as Claude Code sets them."""
    return {option_var(k): as_text(v) for k, v in values.items()}


def option_var(key: str) -> str:
    """The variable that holds option ``key``: ``CLAUDE_PLUGIN_OPTION_<KEY>``."""
    return "CLAUDE_PLUGIN_OPTION_" + re.sub(r"[^A-Za-z0-9_]", "_", key).upper()
