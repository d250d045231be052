"""Validation of ``thinking``, ``output_config.effort`` and thinking blocks sent back.

Config rules, per model (:class:`~tests.fake_api.models.ModelSpec`), with the messages
of the thinking troubleshooting page and the extended thinking page:

* ``{"type": "enabled", "budget_tokens": N}``: N >= 1024
  (``thinking.enabled.budget_tokens: Input should be greater than or equal to 1024``) and
  N < ``max_tokens`` (```max_tokens` must be greater than `thinking.budget_tokens`.``);
  on a model without it: ``"thinking.type.enabled" is not supported for this model. ...``.
* ``{"type": "adaptive"}``: ``adaptive thinking is not supported on this model``.
* ``{"type": "disabled"}``: ``"thinking.type.disabled" is not supported for this model.
  ...``; ``display`` with it: ``thinking.disabled.display: Extra inputs are not
  permitted``. ``display`` is ``"summarized"`` or ``"omitted"``.
* ``output_config.effort``: ``This model does not support the effort parameter.``;
  ``This model does not support effort level 'xhigh'. Supported levels: high, low, max,
  medium.``; with thinking explicitly disabled on a capped model: ``output_config.effort
  'max' is not supported when thinking is disabled on this model. ...``.
* ``tool_choice`` any/tool with ``enabled`` thinking (or adaptive on a model that refuses
  it): ``Thinking may not be enabled when tool_choice forces tool use.``

History rules (thinking blocks in assistant messages):

* every ``thinking`` block's signature and every ``redacted_thinking`` block's data must
  be the server's own for this model: ``messages.1.content.0: Invalid `signature` in
  `thinking` block`` / ``messages.1.content.0: Invalid `data` in `redacted_thinking`
  block``; a changed text in the current turn is ``messages.1.content.0: `thinking` or
  `redacted_thinking` blocks in the latest assistant message cannot be modified. These
  blocks must remain as they were in the original response.``;
* an assistant message may not end with a thinking block
  (``messages.3: The final block in an assistant message cannot be `thinking`.``);
* the tool loop: while thinking is on and the last user message carries tool results,
  the current turn's first assistant message must start with its thinking blocks
  when the reply that made it had thinking (a history the server did not send: always
  with ``enabled``), else ``messages.1.content.0.type: Expected `thinking` or
  `redacted_thinking`, but found `tool_use`. When `thinking` is enabled, a final
  `assistant` message must start with a thinking block (preceeding the lastmost set of
  `tool_use` and `tool_result` blocks). ...``; and each assistant message of the turn
  must carry the very thinking blocks its reply had, in order (else "cannot be
  modified"). Thinking blocks of earlier turns may be left out. With thinking off they
  are accepted and ignored, as documented.

The docs also describe a "graceful degradation" when thinking is toggled inside a tool
loop: that is what happens here when the reply that started the loop had no thinking
(nothing is required of it). Messages the docs and observed API errors do not give
(``between_tools`` unsupported, a thinking block in a user message) are the fake's own,
in the API's style.
"""

from __future__ import annotations

import enum
from typing import Any

from .models import EFFORT_LEVELS, ModelSpec
from .thinking import EmittedTurns, SignatureCheck, ThinkingSigner, block_identity
from .tokens import content_blocks, current_turn_start

__all__ = ["ThinkingMode", "thinking_mode", "config_error", "history_error",
           "EXPECTED_THINKING_MSG", "MODIFIED_MSG"]

_THINKING = ("thinking", "redacted_thinking")
EXPECTED_THINKING_MSG = (
    "{where}.type: Expected `thinking` or `redacted_thinking`, but found `{found}`. When "
    "`thinking` is enabled, a final `assistant` message must start with a thinking block "
    "(preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you "
    "include thinking blocks from previous turns. To avoid this requirement, disable "
    "`thinking`. Please consult our documentation at "
    "https://docs.claude.com/en/docs/build-with-claude/extended-thinking")
MODIFIED_MSG = ("{where}: `thinking` or `redacted_thinking` blocks in the latest assistant "
                "message cannot be modified. These blocks must remain as they were in the "
                "original response.")
_ALLOWED_KEYS = {"enabled": {"type", "budget_tokens", "display"},
                 "adaptive": {"type", "display"}, "disabled": {"type"},
                 "between_tools": {"type"}}


class ThinkingMode(enum.Enum):
    OFF = "off"
    ENABLED = "enabled"  # extended thinking with a budget: the model always thinks
    ADAPTIVE = "adaptive"  # the model decides (also: omitted on a model that thinks by default)


def thinking_mode(body: dict, spec: ModelSpec) -> ThinkingMode:
    cfg = body.get("thinking")
    if cfg is None:
        return ThinkingMode.ADAPTIVE if spec.thinking_default_on else ThinkingMode.OFF
    kind = cfg.get("type") if isinstance(cfg, dict) else None
    if kind == "enabled":
        return ThinkingMode.ENABLED
    return ThinkingMode.ADAPTIVE if kind == "adaptive" else ThinkingMode.OFF


def display_mode(body: dict, spec: ModelSpec) -> str:
    cfg = body.get("thinking")
    display = cfg.get("display") if isinstance(cfg, dict) else None
    return display or spec.display_default


def _config_shape_error(cfg: Any, spec: ModelSpec, max_tokens: int | None) -> str | None:
    if not isinstance(cfg, dict):
        return "thinking: Input should be a valid dictionary or object to extract fields from"
    kind = cfg.get("type")
    if kind not in _ALLOWED_KEYS:
        return (f"thinking: Input tag '{kind}' found using 'type' does not match any of the "
                "expected tags: 'adaptive', 'between_tools', 'disabled', 'enabled'")
    for key in cfg:
        if key not in _ALLOWED_KEYS[kind]:
            return f"thinking.{kind}.{key}: Extra inputs are not permitted"
    if "display" in cfg and cfg["display"] not in ("summarized", "omitted", None):
        return f"thinking.{kind}.display: Input should be 'summarized' or 'omitted'"
    if kind == "enabled":
        budget = cfg.get("budget_tokens")
        if "budget_tokens" not in cfg:
            return "thinking.enabled.budget_tokens: Field required"
        if not isinstance(budget, int) or isinstance(budget, bool):
            return "thinking.enabled.budget_tokens: Input should be a valid integer"
        if budget < 1024:
            return "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"
    if kind not in spec.thinking_types:
        return {
            "enabled": '"thinking.type.enabled" is not supported for this model. Use '
                       '"thinking.type.adaptive" and "output_config.effort" to control '
                       'thinking behavior.',
            "adaptive": "adaptive thinking is not supported on this model",
            "disabled": '"thinking.type.disabled" is not supported for this model. Thinking '
                        'defaults to adaptive mode when not specified; use '
                        '"thinking.type.enabled" with "budget_tokens" for extended thinking.',
        }.get(kind, f'"thinking.type.{kind}" is not supported for this model.')
    if kind == "enabled" and max_tokens is not None and cfg["budget_tokens"] >= max_tokens:
        return "`max_tokens` must be greater than `thinking.budget_tokens`."
    return None


def _effort_error(body: dict, spec: ModelSpec) -> str | None:
    oc = body.get("output_config")
    if oc is None:
        return None
    if not isinstance(oc, dict):
        return "output_config: Input should be a valid dictionary or object to extract fields from"
    effort = oc.get("effort")
    if effort is None:
        return None
    if effort not in EFFORT_LEVELS:
        return "output_config.effort: Input should be 'low', 'medium', 'high', 'xhigh' or 'max'"
    if not spec.effort_levels:
        return "This model does not support the effort parameter."
    if effort not in spec.effort_levels:
        return (f"This model does not support effort level '{effort}'. Supported levels: "
                f"{', '.join(sorted(spec.effort_levels))}.")
    cap = spec.effort_cap_thinking_disabled
    cfg = body.get("thinking")
    if (cap and isinstance(cfg, dict) and cfg.get("type") == "disabled"
            and EFFORT_LEVELS.index(effort) > EFFORT_LEVELS.index(cap)):
        return (f"output_config.effort '{effort}' is not supported when thinking is disabled "
                f"on this model. Use effort '{cap}' or below, or enable thinking.")
    return None


def config_error(body: dict, spec: ModelSpec) -> str | None:
    """The 400 message for the request's thinking / effort / tool_choice config, or None."""
    if "thinking" in body and body["thinking"] is not None:
        err = _config_shape_error(body["thinking"], spec, body.get("max_tokens"))
        if err:
            return err
    err = _effort_error(body, spec)
    if err:
        return err
    choice = body.get("tool_choice")
    forced = isinstance(choice, dict) and choice.get("type") in ("any", "tool")
    mode = thinking_mode(body, spec)
    if forced and (mode is ThinkingMode.ENABLED or (
            mode is ThinkingMode.ADAPTIVE and not spec.forced_tool_use_with_thinking)):
        return "Thinking may not be enabled when tool_choice forces tool use."
    return None


def history_error(body: dict, spec: ModelSpec, signer: ThinkingSigner,
                  emitted: EmittedTurns) -> str | None:
    """The 400 message for the thinking blocks the request sends back, or None."""
    messages = body["messages"]
    turn = current_turn_start(messages)
    for i, msg in enumerate(messages):
        if msg.get("role") != "assistant":
            continue
        blocks = content_blocks(msg.get("content"))
        for j, block in enumerate(blocks):
            if block.get("type") not in _THINKING:
                continue
            verdict = signer.check(body["model"], block)
            where = f"messages.{i}.content.{j}"
            if verdict is SignatureCheck.MODIFIED and i >= turn:
                return MODIFIED_MSG.format(where=where)
            if verdict is not SignatureCheck.VALID:
                if block["type"] == "thinking":
                    return f"{where}: Invalid `signature` in `thinking` block"
                return f"{where}: Invalid `data` in `redacted_thinking` block"
        if blocks and blocks[-1].get("type") in _THINKING:
            return f"messages.{i}: The final block in an assistant message cannot be `thinking`."
    mode = thinking_mode(body, spec)
    last = messages[-1]
    in_tool_loop = last.get("role") == "user" and any(
        b.get("type") == "tool_result" for b in content_blocks(last.get("content")))
    if mode is ThinkingMode.OFF or not in_tool_loop:
        return None
    first = True
    for i in range(turn, len(messages)):
        msg = messages[i]
        if msg.get("role") != "assistant":
            continue
        blocks = content_blocks(msg.get("content"))
        tool_ids = [b.get("id") for b in blocks if b.get("type") == "tool_use"]
        record = emitted.for_tools(tool_ids)
        # What the reply had decides; a history the server never sent needs thinking
        # whenever it is "enabled" (the model always thinks then).
        needs = bool(record.thinking) if record else mode is ThinkingMode.ENABLED
        starts = bool(blocks) and blocks[0].get("type") in _THINKING
        if first and not starts and needs:
            found = blocks[0].get("type") if blocks else "nothing"
            return EXPECTED_THINKING_MSG.format(where=f"messages.{i}.content.0", found=found)
        if record is not None:
            sent = [(j, block_identity(b)) for j, b in enumerate(blocks)
                    if b.get("type") in _THINKING]
            if tuple(ident for _, ident in sent) != record.thinking:
                j = next((j for (j, ident), want in zip(sent, record.thinking) if ident != want),
                         sent[-1][0] if sent else 0)
                return MODIFIED_MSG.format(where=f"messages.{i}.content.{j}")
        first = False
    return None
