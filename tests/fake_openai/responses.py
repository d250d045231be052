"""The Responses API side of the fake: ``POST /v1/responses`` (streams only), each
event checked against the SDK's own ``ResponseStreamEvent`` before it goes out.

A scripted :class:`~tests.fake_openai.replies.Reply` becomes, in order: a reasoning
item (its summary streamed, its ``encrypted_content`` issued and remembered), a
message item (its text streamed), function call items (their arguments streamed),
then ``response.completed`` with the usage (``input_tokens_details.cached_tokens``).
``POST /v1/responses/{id}/cancel`` cancels a background response while it runs
(recorded in ``cancelled``); any other is refused, as the API does.
"""

from __future__ import annotations

import secrets
from typing import Any

from pydantic import TypeAdapter

from .replies import Reply, pieces
from .validate_chat import Invalid
from .validate_responses import check_responses

_EVENTS: TypeAdapter[Any] | None = None


def _checked(event: dict[str, Any]) -> dict[str, Any]:
    global _EVENTS
    if _EVENTS is None:
        from openai.types.responses import ResponseStreamEvent

        _EVENTS = TypeAdapter(ResponseStreamEvent)
    _EVENTS.validate_python(event)  # the SDK's own type: never a wrong shape
    return event


def serve_responses(handler: Any, path: str, body: Any) -> None:
    fake = handler.fake
    if path.startswith("/v1/responses/") and path.endswith("/cancel"):
        _cancel(handler, path.split("/")[3])
        return
    if path != "/v1/responses":
        handler.error(404, f"Invalid URL (POST {path})")
        return
    spec = handler.checked_model(body) if isinstance(body, dict) else None
    if spec is None:
        return
    try:
        check_responses(body, images=spec.images, reasoning=spec.reasoning,
                        issued=fake.issued)
    except Invalid as exc:
        handler.refuse(exc)
        return
    prompt, cached = fake.count(spec.id, [body.get("instructions"), body["input"],
                                          body.get("tools")])
    number, reply = fake.take(body)
    if reply.stall_before and not handler.wait(reply.stall_before):
        fake.gone(number)
        return
    if reply.status is not None:
        handler.send_json(reply.status, {"error": reply.error}, reply.headers)
        return
    _stream(handler, number, reply, spec, body, prompt, cached)


class _Events:
    def __init__(self, reply: Reply, model: str, fake: Any) -> None:
        self.reply = reply
        self.model = model
        self.fake = fake
        self.id = "resp_" + secrets.token_hex(12)
        self.sequence = 0
        self.output: list[dict[str, Any]] = []

    def event(self, kind: str, **fields: Any) -> dict[str, Any]:
        self.sequence += 1
        return _checked({"type": kind, "sequence_number": self.sequence, **fields})

    def response(self, status: str, usage: dict[str, Any] | None = None) -> dict[str, Any]:
        return {"id": self.id, "object": "response", "created_at": 0, "model": self.model,
                "status": status, "output": self.output, "parallel_tool_calls": True,
                "tool_choice": "auto", "tools": [], "usage": usage}

    def items(self) -> list[dict[str, Any]]:
        """Every event up to (not with) response.completed."""
        reply = self.reply
        out = [self.event("response.created", response=self.response("in_progress"))]
        if reply.reasoning:
            item_id = "rs_" + secrets.token_hex(8)
            secret = "enc_" + secrets.token_hex(16)
            self.fake.issued[item_id] = secret
            done = {"id": item_id, "type": "reasoning", "encrypted_content": secret,
                    "summary": [{"type": "summary_text", "text": reply.reasoning}]}
            out += self._item({**done, "summary": []}, done, [
                ("response.reasoning_summary_text.delta", {"summary_index": 0, "delta": p})
                for p in pieces(reply.reasoning, reply.chunk)])
        if reply.text:
            item_id = "msg_" + secrets.token_hex(8)
            added = {"id": item_id, "type": "message", "role": "assistant",
                     "status": "in_progress", "content": []}
            done = {**added, "status": "completed", "content": [
                {"type": "output_text", "text": reply.text, "annotations": []}]}
            out += self._item(added, done, [
                ("response.output_text.delta", {"content_index": 0, "delta": p,
                                                "logprobs": []})
                for p in pieces(reply.text, reply.chunk)])
        for call in reply.calls:
            added = {"id": "fc_" + secrets.token_hex(8), "type": "function_call",
                     "call_id": call.id, "name": call.name, "arguments": "",
                     "status": "in_progress"}
            done = {**added, "arguments": call.arguments, "status": "completed"}
            out += self._item(added, done, [
                ("response.function_call_arguments.delta", {"delta": p})
                for p in pieces(call.arguments, reply.chunk)])
        return out

    def _item(self, added: dict[str, Any], done: dict[str, Any],
              deltas: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
        index = len(self.output)
        events = [self.event("response.output_item.added", output_index=index, item=added)]
        events += [self.event(kind, output_index=index, item_id=added["id"], **fields)
                   for kind, fields in deltas]
        self.output.append(done)
        return [*events, self.event("response.output_item.done", output_index=index,
                                    item=done)]

    def completed(self, prompt: int, cached: int, output: int) -> dict[str, Any]:
        usage = {"input_tokens": prompt, "output_tokens": output,
                 "total_tokens": prompt + output,
                 "input_tokens_details": {"cached_tokens": cached, "cache_write_tokens": 0},
                 "output_tokens_details": {"reasoning_tokens": 0}}
        return self.event("response.completed", response=self.response("completed", usage))


def _cancel(handler: Any, response_id: str) -> None:
    """``responses.cancel``: only a background response, only while it runs."""
    fake = handler.fake
    run = fake.runs.get(response_id)
    if run is None:
        handler.error(404, f"Response with id '{response_id}' not found.")
    elif not run["background"]:
        handler.error(400, "Only background responses can be cancelled.")
    else:
        if run["status"] == "in_progress":
            run["status"] = "cancelled"
            fake._note(fake.cancelled, response_id)
        handler.send_json(200, {**run["response"], "status": run["status"]})


def _stream(handler: Any, number: int, reply: Reply, spec: Any, body: dict[str, Any],
            prompt: int, cached: int) -> None:
    fake = handler.fake
    events = _Events(reply, spec.id, fake)
    frames = [handler.sse(event, event["type"]) for event in events.items()]
    run = fake.runs[events.id] = {"background": body.get("background") is True,
                                  "status": "in_progress",
                                  "response": events.response("in_progress")}
    handler.play(number, reply, frames,
                 b"event: response.output_text.delta\ndata: {not json\n\n",
                 lambda output: [handler.sse(events.completed(prompt, cached, output),
                                             "response.completed")], prompt, cached)
    run["status"] = "completed"
