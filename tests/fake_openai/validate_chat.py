"""Strict checks of a Chat Completions request, written from the ``openai`` SDK's own
request types (``openai/types/chat/``): the keys each object may and must have are
read from the SDK's TypedDicts, so a key the API does not define is refused, and a
required one missing is too. On top, the API's rules the types cannot say:

- a ``tool`` message answers a ``tool_call_id`` of the assistant message just before
  (its run of tool messages); an id answered twice, or no call at all, is refused;
- an assistant message's ``tool_calls`` are each answered by the tool messages right
  after it (the API's "did not have response messages");
- an assistant message has ``content`` or ``tool_calls``; call ids are unique; call
  arguments are JSON objects as text;
- ``image_url`` parts only for a model that takes images; ``reasoning_content`` only
  for a model that sends it (DeepSeek's rule: it goes back in the tool loop);
- ``stream_options`` only with ``stream``; tool names as the API allows.

Each failure is a :class:`Invalid` with OpenAI's wording where known.
"""

from __future__ import annotations

import json
import re
from typing import Any

from openai.types.chat import (
    ChatCompletionAssistantMessageParam,
    ChatCompletionContentPartImageParam,
    ChatCompletionContentPartTextParam,
    ChatCompletionDeveloperMessageParam,
    ChatCompletionFunctionToolParam,
    ChatCompletionMessageFunctionToolCallParam,
    ChatCompletionStreamOptionsParam,
    ChatCompletionSystemMessageParam,
    ChatCompletionToolMessageParam,
    ChatCompletionUserMessageParam,
)
from openai.types.chat.chat_completion_content_part_image_param import ImageURL
from openai.types.chat.chat_completion_message_function_tool_call_param import Function
from openai.types.chat.completion_create_params import CompletionCreateParamsStreaming
from openai.types.shared_params import FunctionDefinition

_ROLES: dict[str, Any] = {
    "system": ChatCompletionSystemMessageParam, "developer": ChatCompletionDeveloperMessageParam,
    "user": ChatCompletionUserMessageParam, "assistant": ChatCompletionAssistantMessageParam,
    "tool": ChatCompletionToolMessageParam,
}
_TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


class Invalid(Exception):
    def __init__(self, message: str, param: str | None = None, status: int = 400) -> None:
        super().__init__(message)
        self.param = param
        self.status = status


def required_keys(typed: Any) -> set[str]:
    """The keys the SDK marks ``Required[...]`` (its modules use string annotations,
    which ``__required_keys__`` does not see through)."""
    found: set[str] = set()
    for cls in typed.__mro__:
        for key, hint in cls.__dict__.get("__annotations__", {}).items():
            text = hint if isinstance(hint, str) else repr(hint)
            if text.split("[", 1)[0].endswith("Required"):
                found.add(key)
    return found


def keys_of(typed: Any, obj: Any, where: str, extra: frozenset[str] = frozenset()) -> None:
    """``obj`` has the required keys of the SDK's TypedDict ``typed`` and no other."""
    if not isinstance(obj, dict):
        raise Invalid(f"Invalid type for '{where}': expected an object.", where)
    required = required_keys(typed)
    allowed = set(typed.__annotations__) | extra
    for key in obj:
        if key not in allowed:
            raise Invalid(f"Unrecognized request argument supplied: {key}" if not where
                          else f"Additional properties are not allowed ('{key}' was unexpected) "
                          f"at '{where}'", f"{where}.{key}".lstrip("."))
    for key in required:
        if key not in obj:
            raise Invalid(f"Missing required parameter: '{where + '.' if where else ''}{key}'.",
                          key)


def check_chat(body: Any, *, images: bool, reasoning_in: bool) -> None:
    keys_of(CompletionCreateParamsStreaming, body, "")
    if body.get("stream") is not True:
        raise Invalid("the fake serves streams only: set 'stream': true", "stream")
    if body.get("stream_options") is not None:
        keys_of(ChatCompletionStreamOptionsParam, body["stream_options"], "stream_options")
    for key in ("max_completion_tokens", "max_tokens"):
        value = body.get(key)
        if value is not None and (not isinstance(value, int) or value < 1):
            raise Invalid(f"Invalid '{key}': integer below minimum value.", key)
    for number, tool in enumerate(body.get("tools") or []):
        _tool(tool, f"tools[{number}]")
    messages = body["messages"]
    if not isinstance(messages, list) or not messages:
        raise Invalid("Invalid 'messages': empty array. Expected an array with minimum "
                      "length 1, but got an empty array instead.", "messages")
    _pairing(messages)
    for number, message in enumerate(messages):
        _message(message, f"messages[{number}]", images=images, reasoning_in=reasoning_in)


def _tool(tool: Any, where: str) -> None:
    keys_of(ChatCompletionFunctionToolParam, tool, where)
    if tool["type"] != "function":
        raise Invalid(f"Invalid value: '{tool['type']}'. Supported values are: 'function'.",
                      f"{where}.type")
    function = tool["function"]
    keys_of(FunctionDefinition, function, f"{where}.function")
    if not _TOOL_NAME.match(str(function["name"])):
        raise Invalid(f"Invalid '{where}.function.name': string does not match pattern. "
                      "Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.",
                      f"{where}.function.name")
    params = function.get("parameters")
    if params is not None and (not isinstance(params, dict) or params.get("type") != "object"):
        raise Invalid(f"Invalid schema for function '{function['name']}': schema must be a "
                      "JSON Schema of 'type: \"object\"'.", f"{where}.function.parameters")


def _message(message: Any, where: str, *, images: bool, reasoning_in: bool) -> None:
    if not isinstance(message, dict) or message.get("role") not in _ROLES:
        raise Invalid(f"Invalid value for '{where}.role'.", f"{where}.role")
    role = message["role"]
    extra = frozenset({"reasoning_content"}) if role == "assistant" and reasoning_in else frozenset()
    keys_of(_ROLES[role], message, where, extra)
    content = message.get("content")
    if role == "assistant":
        if content is None and not message.get("tool_calls"):
            raise Invalid(f"Invalid value for '{where}.content': expected a string, got null.",
                          f"{where}.content")
        for number, call in enumerate(message.get("tool_calls") or []):
            _call(call, f"{where}.tool_calls[{number}]")
    if isinstance(content, list):
        for number, part in enumerate(content):
            _part(part, f"{where}.content[{number}]", role=role, images=images)
    elif content is not None and not isinstance(content, str):
        raise Invalid(f"Invalid type for '{where}.content'.", f"{where}.content")


def _call(call: Any, where: str) -> None:
    keys_of(ChatCompletionMessageFunctionToolCallParam, call, where)
    keys_of(Function, call["function"], f"{where}.function")
    try:
        args = json.loads(call["function"]["arguments"])
    except (TypeError, json.JSONDecodeError):
        args = None
    if not isinstance(args, dict):
        raise Invalid(f"Invalid '{where}.function.arguments': expected a JSON object as text.",
                      f"{where}.function.arguments")


def _part(part: Any, where: str, *, role: str, images: bool) -> None:
    kind = part.get("type") if isinstance(part, dict) else None
    if kind == "text":
        keys_of(ChatCompletionContentPartTextParam, part, where)
    elif kind == "image_url" and role == "user":
        if not images:
            raise Invalid("Invalid content type. image_url is only supported by certain "
                          "models.", where)
        keys_of(ChatCompletionContentPartImageParam, part, where)
        keys_of(ImageURL, part["image_url"], f"{where}.image_url")
        if not str(part["image_url"]["url"]).startswith(("data:image/", "https://")):
            raise Invalid(f"Invalid '{where}.image_url.url': expected a data or https URL.",
                          where)
    else:
        raise Invalid(f"Invalid value: '{kind}'. Supported values are: 'text'"
                      + (" and 'image_url'." if role == "user" else "."), f"{where}.type")


def _pairing(messages: list[Any]) -> None:
    """Every tool call answered right after its message; every answer to a call."""
    waiting: dict[str, int] = {}  # call id: the assistant message that made it
    seen: set[str] = set()
    for number, message in enumerate(messages):
        role = message.get("role") if isinstance(message, dict) else None
        if role == "tool":
            call_id = message.get("tool_call_id")
            if call_id not in waiting:
                raise Invalid("Invalid parameter: messages with role 'tool' must be a response "
                              "to a preceeding message with 'tool_calls'.",
                              f"messages.[{number}].role")
            del waiting[call_id]
            continue
        if waiting:
            raise Invalid("An assistant message with 'tool_calls' must be followed by tool "
                          "messages responding to each 'tool_call_id'. The following "
                          f"tool_call_ids did not have response messages: "
                          f"{', '.join(waiting)}", f"messages.[{number - 1}].role")
        if role == "assistant":
            for call in message.get("tool_calls") or []:
                call_id = call.get("id") if isinstance(call, dict) else None
                if not call_id or call_id in seen:
                    raise Invalid(f"Duplicate or missing tool call id {call_id!r}.",
                                  f"messages.[{number}].tool_calls")
                seen.add(call_id)
                waiting[call_id] = number
    if waiting:
        raise Invalid("An assistant message with 'tool_calls' must be followed by tool "
                      "messages responding to each 'tool_call_id'. The following "
                      f"tool_call_ids did not have response messages: {', '.join(waiting)}",
                      "messages")
