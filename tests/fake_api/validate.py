"""Strict validation of Messages API request bodies, modelled on the real API.

This is the one entry point for request validation; the rules of caching and thinking
live beside it in :mod:`tests.fake_api.validate_cache` and
:mod:`tests.fake_api.validate_thinking`. The server applies, in order:

1. :func:`validate_messages` (stateless: the body's shape, roles, tool_use/tool_result
   pairing, thinking block fields, ``cache_control`` rules) -> 400;
2. the model lookup -> 404 ``not_found_error`` ``model: NAME``
   (:func:`unknown_model_message`);
3. :func:`model_rules_error` (``max_tokens`` against the model's ceiling, ``thinking`` /
   ``effort`` / ``tool_choice`` for this model, thinking blocks sent back: signatures and
   the tool-loop rule) -> 400;
4. :func:`window_error` (the prompt against the model's context window) -> 400
   ``prompt is too long: N tokens > M maximum``.

``validate_messages(body)`` returns ``None`` when the body is acceptable, or the
message the real API would put in a 400 ``invalid_request_error`` (wording copied
from, or written in the style of, the real API).

It is *stricter* than the real API in a few places, on purpose:

* consecutive messages with the same role are an error (the real API merges them);
* by default the last message must be a ``user`` message (assistant prefill is not
  supported by the fake server, and the newest models refuse it too). Pass
  ``allow_assistant_last=True`` to allow it; the server also allows it for a
  ``pause_turn`` continuation (the final message is exactly the paused content);
* a request whose messages contain ``tool_use`` / ``tool_result`` blocks must
  define ``tools`` (the real API does this too).

``max_tokens: 0`` is accepted (cache pre-warming) except with ``stream: true``, forced
tool use or ``output_config.format``, which the docs say are rejected (the wording of
those three messages is the fake's own).
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any

from .models import ModelSpec
from .thinking import EmittedTurns, ThinkingSigner
from .validate_images import pixel_error
from .validate_cache import cache_control_error
from .validate_thinking import config_error, history_error
from .validate_web_search import block_error, message_error, tool_error

__all__ = ["validate_messages", "model_rules_error", "window_error", "unknown_model_message"]

_TOOL_ID_RE = re.compile(r"^[a-zA-Z0-9_-]+$")
_TOOL_NAME_RE = re.compile(r"^[a-zA-Z0-9_-]{1,128}$")

_KNOWN_BLOCK_TYPES = {
    "text",
    "image",
    "document",
    "search_result",
    "thinking",
    "redacted_thinking",
    "tool_use",
    "tool_result",
    "server_tool_use",
    "web_search_tool_result",
    "web_fetch_tool_result",
    "code_execution_tool_result",
    "bash_code_execution_tool_result",
    "text_editor_code_execution_tool_result",
    "tool_search_tool_result",
    "container_upload",
}

ALTERNATE_MSG = 'messages: roles must alternate between "user" and "assistant"'
EMPTY_TEXT_MSG = "messages: text content blocks must be non-empty"
WHITESPACE_TEXT_MSG = "messages: text content blocks must contain non-whitespace text"


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _check_text_block(block: dict, where: str, scope: str = "messages") -> str | None:
    text = block.get("text")
    if not isinstance(text, str):
        return f"{where}.text: Input should be a valid string"
    if "cache_control" in block and not text.strip():  # this error wins over the next two
        tag = ".text" if scope == "messages" else ""
        return f"{where}{tag}: cache_control cannot be set for empty text blocks"
    if text == "":
        return f"{scope}: text content blocks must be non-empty"
    if not text.strip():
        return f"{scope}: text content blocks must contain non-whitespace text"
    return None


def _check_tools(tools: Any) -> str | None:
    if not isinstance(tools, list):
        return "tools: Input should be a valid list"
    seen: set[str] = set()
    for i, tool in enumerate(tools):
        if not isinstance(tool, dict):
            return f"tools.{i}: Input should be a valid dictionary"
        name = tool.get("name")
        ttype = tool.get("type")
        if ttype in (None, "custom"):
            if not isinstance(name, str):
                return f"tools.{i}.custom.name: Field required"
            if not _TOOL_NAME_RE.match(name):
                return f"tools.{i}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{{1,128}}$'"
            schema = tool.get("input_schema")
            if schema is None:
                return f"tools.{i}.custom.input_schema: Field required"
            if not isinstance(schema, dict):
                return f"tools.{i}.custom.input_schema: Input should be a valid dictionary"
            if schema.get("type") != "object":
                return f"tools.{i}.custom.input_schema.type: Input should be 'object'"
        err = tool_error(i, tool)
        if err:
            return err
        if isinstance(name, str):
            if name in seen:
                return "tools: Tool names must be unique."
            seen.add(name)
    return None


def _check_system_message(content: Any, i: int) -> str | None:
    """A ``role: "system"`` message: text only, never empty; it takes no part in the
    alternation of user and assistant."""
    if isinstance(content, str):
        return None if content.strip() else f"messages.{i}.content: system text must be non-empty"
    if not isinstance(content, list) or not content:
        return f"messages.{i}.content: Input should be a valid string or a non-empty list"
    for j, block in enumerate(content):
        if not isinstance(block, dict) or block.get("type") != "text":
            return f"messages.{i}.content.{j}.type: Input should be 'text'"
    return None


def _check_system(system: Any) -> str | None:
    if system is None or isinstance(system, str):
        return None
    if not isinstance(system, list):
        return "system: Input should be a valid string or a valid list"
    for i, block in enumerate(system):
        if not isinstance(block, dict) or block.get("type") != "text":
            return f"system.{i}.type: Input should be 'text'"
        err = _check_text_block(block, f"system.{i}", scope="system")
        if err:
            return err
    return None


def _check_tool_result_content(content: Any, where: str) -> str | None:
    if content is None or isinstance(content, str):
        return None
    if not isinstance(content, list):
        return f"{where}.content: Input should be a valid string or a valid list"
    for k, sub in enumerate(content):
        if not isinstance(sub, dict):
            return f"{where}.content.{k}: Input should be a valid dictionary"
        kind = sub.get("type")
        if kind == "text":
            err = _check_text_block(sub, f"{where}.content.{k}")
            if err:
                return err
        elif kind == "image":
            err = _check_image_block(sub, f"{where}.content.{k}")
            if err:
                return err
        elif kind not in ("search_result", "document"):
            return f"{where}.content.{k}.type: Input should be 'text', 'image', 'search_result' or 'document'"
    return None


_IMAGE_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")
_IMAGE_MAGIC = (("image/png", b"\x89PNG\r\n\x1a\n"), ("image/jpeg", b"\xff\xd8\xff"),
                ("image/gif", b"GIF87a"), ("image/gif", b"GIF89a"))


def _image_type(data: bytes) -> str | None:
    """What the bytes are, as the API's own check sees them (the fake's reading)."""
    for media_type, magic in _IMAGE_MAGIC:
        if data.startswith(magic):
            return media_type
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def _check_image_block(block: dict, where: str) -> str | None:
    """An image block as the API checks it (wording from its 400 answers)."""
    where = f"{where}.image"
    source = block.get("source")
    if not isinstance(source, dict):
        return f"{where}.source: Field required"
    if source.get("type") == "base64":
        if "media_type" not in source:
            return f"{where}.source.base64.media_type: Field required"
        if source["media_type"] not in _IMAGE_TYPES:
            return (f"{where}.source.base64.media_type: Input should be "
                    "'image/jpeg', 'image/png', 'image/gif' or 'image/webp'")
        data = source.get("data")
        if not isinstance(data, str) or not data:
            return f"{where}.source.base64.data: Field required"
        if len(data) > 5 * 1024 * 1024:
            return f"{where}.source.base64: image exceeds 5 MB maximum: {len(data)} bytes > 5242880 bytes"
        try:
            raw = base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError):
            return f"{where}.source.base64.data: The image data is not valid base64"
        found = _image_type(raw[:16])
        if found is None:
            return f"{where}.source.base64.data: Could not process image"
        if found != source["media_type"]:
            return (f"{where}.source.base64.data: Image does not match the provided media type "
                    f"{source['media_type']}")
        return pixel_error(raw, where)
    if source.get("type") == "url":
        return None if isinstance(source.get("url"), str) else f"{where}.source.url.url: Field required"
    return f"{where}.source.type: Input tag '{source.get('type')}' is not one of 'base64', 'url'"


def _check_max_tokens(body: dict) -> str | None:
    max_tokens = body["max_tokens"]
    if not _is_int(max_tokens):
        return "max_tokens: Input should be a valid integer"
    if max_tokens < 0:
        return "max_tokens: Input should be greater than or equal to 0"
    if max_tokens == 0:  # cache pre-warming: no output, so nothing that implies output
        choice = body.get("tool_choice")
        if body.get("stream"):
            return "max_tokens: 0 (cache pre-warming) cannot be combined with `stream: true`"
        if isinstance(choice, dict) and choice.get("type") in ("any", "tool"):
            return "max_tokens: 0 (cache pre-warming) cannot be combined with forced tool use"
        if isinstance(body.get("output_config"), dict) and body["output_config"].get("format"):
            return "max_tokens: 0 (cache pre-warming) cannot be combined with `output_config.format`"
    return None


def _check_tool_choice(choice: Any, tools: Any) -> str | None:
    if choice is None:
        return None
    if not isinstance(choice, dict) or choice.get("type") not in ("auto", "any", "tool", "none"):
        return ("tool_choice: Input tag found using 'type' does not match any of the expected "
                "tags: 'auto', 'any', 'tool', 'none'")
    if choice["type"] == "tool":
        names = {t.get("name") for t in tools or [] if isinstance(t, dict)}
        if not isinstance(choice.get("name"), str):
            return "tool_choice.tool.name: Field required"
        if choice["name"] not in names:
            return f"Tool '{choice['name']}' not found in the provided tools"
    return None


def _check_thinking_block(block: dict, role: str, where: str) -> str | None:
    kind = block["type"]
    if role != "assistant":
        return f"{where}: `{kind}` blocks can only be in `assistant` messages"
    fields = ("thinking", "signature") if kind == "thinking" else ("data",)
    for name in fields:
        if name not in block:
            return f"{where}.{kind}.{name}: Field required"
        if not isinstance(block[name], str):
            return f"{where}.{kind}.{name}: Input should be a valid string"
    return None


def validate_messages(body: Any, *, allow_assistant_last: bool = False,
                      require_max_tokens: bool = True) -> str | None:
    """Return the real-API-style 400 error message for ``body``, or ``None`` if valid.

    ``require_max_tokens=False`` is for ``/v1/messages/count_tokens``, whose body has none.
    """
    if not isinstance(body, dict):
        return "Request body must be a JSON object"

    # --- required top-level fields -------------------------------------------------
    for field in ("max_tokens", "messages", "model"):
        if field not in body and (field != "max_tokens" or require_max_tokens):
            return f"{field}: Field required"
    model = body["model"]
    if not isinstance(model, str) or not model:
        return "model: Input should be a valid string"
    if "max_tokens" in body:
        err = _check_max_tokens(body)
        if err:
            return err
    if "stream" in body and not isinstance(body["stream"], bool):
        return "stream: Input should be a valid boolean"

    err = _check_system(body.get("system"))
    if err:
        return err
    has_tools = False
    if "tools" in body and body["tools"] is not None:
        err = _check_tools(body["tools"])
        if err:
            return err
        has_tools = len(body["tools"]) > 0

    messages = body["messages"]
    if not isinstance(messages, list):
        return "messages: Input should be a valid list"
    if not messages:
        return "messages: at least one message is required"

    # --- per-message structure ------------------------------------------------------
    # normalised: list of (role, [blocks])
    norm: list[tuple[str, list[dict]]] = []
    seen_tool_use_ids: set[str] = set()
    for i, msg in enumerate(messages):
        if not isinstance(msg, dict):
            return f"messages.{i}: Input should be a valid dictionary"
        role = msg.get("role")
        if "role" not in msg:
            return f"messages.{i}.role: Field required"
        if role not in ("user", "assistant", "system"):
            return f"messages.{i}.role: Input should be 'user', 'assistant' or 'system'"
        if "content" not in msg:
            return f"messages.{i}.content: Field required"
        if role == "system":  # mid-conversation system text (Claude Code 2.1.x sends it)
            err = _check_system_message(msg["content"], i)
            if err:
                return err
            continue
        content = msg["content"]
        is_last = i == len(messages) - 1
        if isinstance(content, str):
            if content == "":
                if not (is_last and role == "assistant" and allow_assistant_last):
                    return (
                        f"messages.{i}: all messages must have non-empty content except for "
                        "the optional final assistant message"
                    )
                blocks: list[dict] = []
            else:
                if not content.strip():
                    return WHITESPACE_TEXT_MSG
                blocks = [{"type": "text", "text": content}]
        elif isinstance(content, list):
            if not content and not (is_last and role == "assistant" and allow_assistant_last):
                return (
                    f"messages.{i}: all messages must have non-empty content except for "
                    "the optional final assistant message"
                )
            blocks = []
            for j, block in enumerate(content):
                where = f"messages.{i}.content.{j}"
                if not isinstance(block, dict):
                    return f"{where}: Input should be a valid dictionary"
                btype = block.get("type")
                if "type" not in block:
                    return f"{where}.type: Field required"
                if btype not in _KNOWN_BLOCK_TYPES:
                    return (
                        f"{where}: Input tag '{btype}' found using 'type' does not match any of the "
                        "expected tags"
                    )
                if btype == "text":
                    err = _check_text_block(block, where)
                    if err:
                        return err
                elif btype == "tool_use":
                    if role != "assistant":
                        return f"{where}: `tool_use` blocks can only be in `assistant` messages"
                    tid = block.get("id")
                    if not isinstance(tid, str):
                        return f"{where}.tool_use.id: Field required"
                    if not _TOOL_ID_RE.match(tid):
                        return f"{where}.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'"
                    if not isinstance(block.get("name"), str) or not block.get("name"):
                        return f"{where}.tool_use.name: Field required"
                    if "input" not in block:
                        return f"{where}.tool_use.input: Field required"
                    if not isinstance(block["input"], dict):
                        return f"{where}.tool_use.input: Input should be a valid dictionary"
                    if tid in seen_tool_use_ids:
                        return f"messages.{i}: `tool_use` ids must be unique"
                    seen_tool_use_ids.add(tid)
                    if not has_tools:
                        return (
                            f"{where}: Requests which include `tool_use` or `tool_result` blocks "
                            "must define tools."
                        )
                elif btype == "tool_result":
                    if role != "user":
                        return f"{where}: `tool_result` blocks can only be in `user` messages"
                    if not isinstance(block.get("tool_use_id"), str):
                        return f"{where}.tool_result.tool_use_id: Field required"
                    if "is_error" in block and not isinstance(block["is_error"], bool):
                        return f"{where}.tool_result.is_error: Input should be a valid boolean"
                    err = _check_tool_result_content(block.get("content"), f"{where}.tool_result")
                    if err:
                        return err
                    if not has_tools:
                        return (
                            f"{where}: Requests which include `tool_use` or `tool_result` blocks "
                            "must define tools."
                        )
                elif btype in ("thinking", "redacted_thinking"):
                    err = _check_thinking_block(block, role, where)
                    if err:
                        return err
                elif btype == "image":
                    err = _check_image_block(block, where)
                    if err:
                        return err
                err = block_error(block, role, where)
                if err:
                    return err
                blocks.append(block)
        else:
            return f"messages.{i}.content: Input should be a valid string or a valid list"
        norm.append((role, blocks))

    # --- role ordering ------------------------------------------------------------
    if norm[0][0] != "user":
        return 'messages: first message must use the "user" role'
    for i in range(1, len(norm)):
        if norm[i][0] == norm[i - 1][0]:
            return ALTERNATE_MSG

    # --- tool_use / tool_result pairing -------------------------------------------
    for i, (role, blocks) in enumerate(norm):
        if role == "assistant":
            err = message_error(i, blocks, final=i == len(norm) - 1)
            if err:
                return err
            ids = [b["id"] for b in blocks if b.get("type") == "tool_use"]
            if not ids:
                continue
            following: set[str] = set()
            if i + 1 < len(norm) and norm[i + 1][0] == "user":
                following = {b["tool_use_id"] for b in norm[i + 1][1] if b.get("type") == "tool_result"}
            missing = [t for t in ids if t not in following]
            if missing:
                return (
                    f"messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately "
                    f"after: {', '.join(missing)}. Each `tool_use` block must have a corresponding "
                    "`tool_result` block in the next message."
                )
        else:
            results = [(j, b) for j, b in enumerate(blocks) if b.get("type") == "tool_result"]
            if not results:
                continue
            previous: set[str] = set()
            if i > 0 and norm[i - 1][0] == "assistant":
                previous = {b["id"] for b in norm[i - 1][1] if b.get("type") == "tool_use"}
            seen_results: set[str] = set()
            for _j, b in results:
                tid = b["tool_use_id"]
                if tid not in previous:
                    return (
                        f"messages.{i}: unexpected `tool_use_id` found in `tool_result` blocks: {tid}. "
                        "Each `tool_result` block must have a corresponding `tool_use` block in the "
                        "previous message."
                    )
                if tid in seen_results:
                    return (
                        f"messages.{i}: each `tool_use` id must have at most one `tool_result` block: "
                        f"{tid} has more than one."
                    )
                seen_results.add(tid)
            # tool_result blocks must come before any other content in the message
            first_other = next(
                (j for j, b in enumerate(blocks) if b.get("type") != "tool_result"), None
            )
            if first_other is not None and any(j > first_other for j, _b in results):
                return (
                    f"messages.{i}: `tool_result` blocks must come first in the user message "
                    "content, before any other content blocks. Each `tool_result` block must be "
                    "placed before any `text` or other blocks in the message."
                )

    # --- final message ------------------------------------------------------------
    if norm[-1][0] != "user" and not allow_assistant_last:
        return (
            'messages: the final message must use the "user" role '
            "(this fake server does not support assistant prefill)"
        )
    err = _check_tool_choice(body.get("tool_choice"), body.get("tools"))
    if err:
        return err
    return cache_control_error(body)


def unknown_model_message(model: str) -> str:
    """The 404 ``not_found_error`` message for a model the catalogue does not have."""
    return f"model: {model}"


def model_rules_error(body: dict, spec: ModelSpec, signer: ThinkingSigner,
                      emitted: EmittedTurns) -> str | None:
    """The 400 message for what this model does not accept in a valid body, or None."""
    max_tokens = body.get("max_tokens")
    if _is_int(max_tokens) and max_tokens > spec.max_tokens:
        return (f"max_tokens: {max_tokens} > {spec.max_tokens}, which is the maximum allowed "
                f"number of output tokens for {spec.id}")
    return config_error(body, spec) or history_error(body, spec, signer, emitted)


def window_error(body: dict, spec: ModelSpec, input_tokens: int) -> str | None:
    """The 400 message when the prompt does not fit the model's context window, or None."""
    window = spec.max_input_tokens
    if input_tokens > window:
        return f"prompt is too long: {input_tokens} tokens > {window} maximum"
    max_tokens = body.get("max_tokens") or 0
    if spec.overflow_is_error and input_tokens + max_tokens > window:
        return (f"input length and `max_tokens` exceed context limit: {input_tokens} + "
                f"{max_tokens} > {window}, decrease input length or `max_tokens` and try again")
    return None
