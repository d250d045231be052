"""Strict checks of a Responses API request, from the ``openai`` SDK's own request types
(``openai/types/responses/``): each input item, content part and tool has the keys its
TypedDict allows and requires. On top, the API's rules:

- a ``function_call_output`` answers a ``function_call`` given before it, once; every
  ``function_call`` has its output ("No tool output found for function call ...");
- a ``reasoning`` item with ``store: false`` carries the ``encrypted_content`` the
  server issued (else "Item with id ... not found"), unmodified, and is followed by the
  item it led to (a message or a function call);
- ``reasoning`` and ``include: ["reasoning.encrypted_content"]`` only for a model that
  reasons; ``input_image`` only for one that takes images.
"""

from __future__ import annotations

from typing import Any

from openai.types.responses import (
    EasyInputMessageParam,
    FunctionToolParam,
    ResponseFunctionToolCallParam,
    ResponseInputImageParam,
    ResponseInputTextParam,
    ResponseReasoningItemParam,
)
from openai.types.responses.response_create_params import ResponseCreateParamsStreaming
from openai.types.responses.response_input_param import FunctionCallOutput
from openai.types.shared_params import Reasoning

from .validate_chat import Invalid, keys_of

_ITEMS: dict[str, Any] = {"function_call": ResponseFunctionToolCallParam,
                          "function_call_output": FunctionCallOutput,
                          "reasoning": ResponseReasoningItemParam}


def check_responses(body: Any, *, images: bool, reasoning: bool,
                    issued: dict[str, str]) -> None:
    """``issued``: the encrypted content the server gave each reasoning item id."""
    keys_of(ResponseCreateParamsStreaming, body, "")
    if body.get("stream") is not True:
        raise Invalid("the fake serves streams only: set 'stream': true", "stream")
    if body.get("background") and body.get("store") is False:
        raise Invalid("Background mode requires store=true.", "background")
    if body.get("reasoning") is not None:
        keys_of(Reasoning, body["reasoning"], "reasoning")
    if not reasoning and (body.get("reasoning") or "reasoning.encrypted_content" in (
            body.get("include") or [])):
        raise Invalid("Unsupported parameter: 'reasoning' is not supported with this model.",
                      "reasoning")
    for number, tool in enumerate(body.get("tools") or []):
        keys_of(FunctionToolParam, tool, f"tools[{number}]")
    items = body.get("input")
    if not isinstance(items, list) or not items:
        raise Invalid("Invalid 'input': expected a non-empty array of items.", "input")
    for number, item in enumerate(items):
        _item(item, f"input[{number}]", images=images)
    _pairing(items, store=body.get("store") is not False, issued=issued)


def _item(item: Any, where: str, *, images: bool) -> None:
    kind = item.get("type", "message") if isinstance(item, dict) else None
    if kind == "message":
        keys_of(EasyInputMessageParam, item, where)
        content = item["content"]
        if isinstance(content, list):
            for number, part in enumerate(content):
                _part(part, f"{where}.content[{number}]", images=images)
        elif not isinstance(content, str):
            raise Invalid(f"Invalid type for '{where}.content'.", f"{where}.content")
    elif kind in _ITEMS:
        keys_of(_ITEMS[kind], item, where)
    else:
        raise Invalid(f"Invalid value: '{kind}'. Supported values are: 'message', "
                      "'function_call', 'function_call_output' and 'reasoning'.",
                      f"{where}.type")


def _part(part: Any, where: str, *, images: bool) -> None:
    kind = part.get("type") if isinstance(part, dict) else None
    if kind == "input_text":
        keys_of(ResponseInputTextParam, part, where)
    elif kind == "input_image" and images:
        keys_of(ResponseInputImageParam, part, where)
    else:
        raise Invalid(f"Invalid value: '{kind}' at '{where}.type'.", f"{where}.type")


def _pairing(items: list[dict[str, Any]], *, store: bool, issued: dict[str, str]) -> None:
    calls: set[str] = set()
    answered: set[str] = set()
    for number, item in enumerate(items):
        kind = item.get("type", "message")
        if kind == "function_call":
            calls.add(item["call_id"])
        elif kind == "function_call_output":
            call_id = item.get("call_id")
            if call_id not in calls or call_id in answered:
                raise Invalid(f"No tool call found for function call output with call_id "
                              f"{call_id}.", f"input[{number}]")
            answered.add(call_id)
        elif kind == "reasoning":
            _reasoning(item, items[number + 1:number + 2], store=store, issued=issued)
    missing = sorted(calls - answered)
    if missing:
        raise Invalid(f"No tool output found for function call {missing[0]}.", "input")


def _reasoning(item: dict[str, Any], following: list[dict[str, Any]], *, store: bool,
               issued: dict[str, str]) -> None:
    item_id = item["id"]
    if not store and "encrypted_content" not in item:
        raise Invalid(f"Item with id '{item_id}' not found. Items are not persisted when "
                      "`store` is set to false. Try again with `store` set to true, or "
                      "remove this item from your input.", "input", status=404)
    if issued.get(item_id) != item.get("encrypted_content"):
        raise Invalid(f"The encrypted content for item {item_id} could not be verified.",
                      "input")
    if not following or following[0].get("type", "message") not in ("message",
                                                                     "function_call"):
        raise Invalid(f"Item '{item_id}' of type 'reasoning' was provided without its "
                      "required following item.", "input")
