"""An MCP server asks the user something (``elicitation/create``), as the front ends see it.

Two modes: a **form** (a flat object of strings, numbers, booleans and choices, the
restricted JSON Schema MCP allows) and a **URL** the user is sent to (a login, a
payment: what must not pass through the client). The answer is one of three actions:
``accept`` (with the form's values), ``decline`` (the user said no) or ``cancel`` (the
user dismissed it, Esc).

A front end hands the session's servers an :data:`Elicitor`; the TUI asks in a dialog,
the ACP server asks its client, print mode declines. What the user typed is checked
against the form here (:func:`check`) before it goes back to the server: a server gets
only the fields it asked for, of the types it asked for.

Light on purpose: no MCP SDK at import.
"""

# Annotations are objects, not strings: pydantic would compile each field's string when
# the class is made.
import math
from collections.abc import Awaitable, Callable
from enum import StrEnum
from typing import Any

from pydantic import Field

from agent_tui.protocol.model_base import DeferredModel
from agent_tui.yes_no import yes_no

#: What a form field's value may be (MCP's ``ElicitResult.content`` values).
Value = str | int | float | bool | list[str] | None
#: The longest message or field text a front end shows (a hostile server may send more).
MAX_TEXT = 2000
MAX_FIELDS = 40


class ElicitMode(StrEnum):
    FORM = "form"
    URL = "url"


class FieldKind(StrEnum):
    STRING = "string"
    NUMBER = "number"
    INTEGER = "integer"
    BOOLEAN = "boolean"
    CHOICE = "choice"  # one of ``choices``
    CHOICES = "choices"  # several of ``choices`` (an array of enum strings)


class FormField(DeferredModel):
    name: str
    kind: FieldKind
    title: str = ""
    description: str = ""
    required: bool = False
    default: Value = None
    choices: list[str] = Field(default_factory=list)
    choice_titles: list[str] = Field(default_factory=list)
    minimum: float | None = None
    maximum: float | None = None
    min_length: int | None = None
    max_length: int | None = None
    secret: bool = False  # typed unechoed (a plugin's sensitive option)

    @property
    def label(self) -> str:
        return self.title or self.name


class Elicitation(DeferredModel):
    """One question from one server."""

    server: str
    mode: ElicitMode
    message: str
    fields: list[FormField] = Field(default_factory=list)  # form mode
    url: str | None = None  # URL mode
    elicitation_id: str | None = None  # URL mode (2025-11-25)


class ElicitAction(StrEnum):
    ACCEPT = "accept"
    DECLINE = "decline"
    CANCEL = "cancel"


class ElicitAnswer(DeferredModel):
    action: ElicitAction
    content: dict[str, Value] | None = None  # form mode, accept only


#: How a front end answers: awaited on the servers' loop.
Elicitor = Callable[[Elicitation], Awaitable[ElicitAnswer]]


class UnsupportedForm(ValueError):
    """The server's schema is outside what MCP allows for a form."""


def form_fields(schema: Any) -> list[FormField]:
    """The fields of MCP's restricted form schema; raise :class:`UnsupportedForm`."""
    if not isinstance(schema, dict) or schema.get("type", "object") != "object":
        raise UnsupportedForm("the form's schema is not an object")
    props = schema.get("properties") or {}
    required = schema.get("required") or []
    if not isinstance(props, dict) or not isinstance(required, list):
        raise UnsupportedForm("the form's properties are malformed")
    if len(props) > MAX_FIELDS:
        raise UnsupportedForm(f"the form has more than {MAX_FIELDS} fields")
    return [_field(str(name), spec, name in required) for name, spec in props.items()]


def _field(name: str, spec: Any, required: bool) -> FormField:
    if not isinstance(spec, dict):
        raise UnsupportedForm(f"field {name!r} is malformed")
    kind, choices, titles = _kind(name, spec)
    default = spec.get("default")
    return FormField(
        name=name, kind=kind, title=_text(spec.get("title")), description=_text(spec.get("description")),
        required=required, choices=choices, choice_titles=titles,
        default=default if isinstance(default, (str, int, float, bool, list)) else None,
        minimum=_num(spec.get("minimum")), maximum=_num(spec.get("maximum")),
        min_length=_int(spec.get("minLength", spec.get("minItems"))),
        max_length=_int(spec.get("maxLength", spec.get("maxItems"))),
    )


def _kind(name: str, spec: dict[str, Any]) -> tuple[FieldKind, list[str], list[str]]:
    kind = spec.get("type")
    if kind == "array":
        items = spec.get("items") or {}
        choices, titles = _options(items.get("enum"), items.get("anyOf") or items.get("oneOf"))
        if not choices:
            raise UnsupportedForm(f"field {name!r}: an array without choices")
        return FieldKind.CHOICES, choices, titles
    choices, titles = _options(spec.get("enum"), spec.get("oneOf") or spec.get("anyOf"))
    if choices:
        return FieldKind.CHOICE, choices, titles or [str(t) for t in spec.get("enumNames") or []]
    if kind in ("string", "number", "integer", "boolean"):
        return FieldKind(kind), [], []
    raise UnsupportedForm(f"field {name!r}: type {kind!r} is not allowed in a form")


def _options(enum: Any, alternatives: Any) -> tuple[list[str], list[str]]:
    if isinstance(enum, list):
        return [str(v) for v in enum], []
    if isinstance(alternatives, list):
        pairs = [(str(a.get("const")), _text(a.get("title"))) for a in alternatives
                 if isinstance(a, dict) and "const" in a]
        return [p[0] for p in pairs], [p[1] or p[0] for p in pairs]
    return [], []


def parse_value(field: FormField, text: str) -> Value:
    """What the user typed for ``field`` as the value the server expects; raise
    ValueError with a message for the user. Empty text: no value."""
    text = text.strip()
    if not text:
        return None
    match field.kind:
        case FieldKind.STRING:
            return text
        case FieldKind.INTEGER:
            try:
                return int(text)
            except ValueError:
                raise ValueError("expected a whole number") from None
        case FieldKind.NUMBER:
            try:
                number = float(text)
            except ValueError:
                raise ValueError("expected a number") from None
            if not math.isfinite(number):
                raise ValueError("expected a finite number")
            return int(number) if number.is_integer() and "." not in text else number
        case FieldKind.BOOLEAN:
            if (answer := yes_no(text)) is None:
                raise ValueError("yes or no")
            return answer
        case FieldKind.CHOICE:
            return text
        case FieldKind.CHOICES:
            return [part.strip() for part in text.split(",") if part.strip()]


def check(fields: list[FormField], content: dict[str, Any]) -> dict[str, str]:
    """Problems with ``content`` for the form, by field name (empty: it is fine)."""
    problems: dict[str, str] = {}
    known = {f.name for f in fields}
    for extra in sorted(set(content) - known):
        problems[extra] = "not a field of this form"
    for field in fields:
        value = content.get(field.name)
        if value is None:
            if field.required:
                problems[field.name] = "required"
            continue
        why = _wrong(field, value)
        if why:
            problems[field.name] = why
    return problems


def _wrong(field: FormField, value: Any) -> str | None:
    match field.kind:
        case FieldKind.STRING:
            if not isinstance(value, str):
                return "expected text"
            return _length(field, len(value))
        case FieldKind.INTEGER | FieldKind.NUMBER:
            ints = field.kind is FieldKind.INTEGER
            if isinstance(value, bool) or not isinstance(value, int if ints else (int, float)):
                return "expected a whole number" if ints else "expected a number"
            if field.minimum is not None and value < field.minimum:
                return f"at least {field.minimum:g}"
            if field.maximum is not None and value > field.maximum:
                return f"at most {field.maximum:g}"
            return None
        case FieldKind.BOOLEAN:
            return None if isinstance(value, bool) else "expected yes or no"
        case FieldKind.CHOICE:
            return None if value in field.choices else "one of: " + ", ".join(field.choices)
        case FieldKind.CHOICES:
            if not isinstance(value, list) or any(v not in field.choices for v in value):
                return "some of: " + ", ".join(field.choices)
            return _length(field, len(value))


def _length(field: FormField, n: int) -> str | None:
    if field.min_length is not None and n < field.min_length:
        return f"at least {field.min_length}"
    if field.max_length is not None and n > field.max_length:
        return f"at most {field.max_length}"
    return None


def _text(value: Any) -> str:
    return str(value)[:MAX_TEXT] if isinstance(value, (str, int, float)) else ""


def _num(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


async def decline(_request: Elicitation) -> ElicitAnswer:
    """The answer where nobody can be asked."""
    return ElicitAnswer(action=ElicitAction.DECLINE)


__all__ = [
    "ElicitAction",
    "ElicitAnswer",
    "ElicitMode",
    "Elicitation",
    "Elicitor",
    "FieldKind",
    "FormField",
    "UnsupportedForm",
    "check",
    "decline",
    "form_fields",
    "parse_value",
]
