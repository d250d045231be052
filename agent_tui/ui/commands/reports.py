"""The pages ``/cost``, ``/permissions`` and ``/mcp`` show, as Rich text."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.text import Text

from agent_tui.core.usage.pricing import WEB_SEARCH_USD
from agent_tui.ui.render.safe_text import clean, first_line
from agent_tui.ui.link.session_facts import PermissionFacts
from agent_tui.ui.render.usage import Totals, UsageTally, money, tokens_short

KIND_WORDS = {"deny": "deny   ", "ask": "ask    ", "allow": "allow  ", "session": "session"}


def _totals_line(t: Totals) -> str:
    searches = (f", {t.web_search_requests} web search{'es' if t.web_search_requests != 1 else ''}"
                if t.web_search_requests else "")
    return (f"{t.requests} request(s): {tokens_short(t.input_tokens)} in, "
            f"{tokens_short(t.output_tokens)} out, {tokens_short(t.cache_read_input_tokens)} cache read, "
            f"{tokens_short(t.cache_creation_input_tokens)} cache write{searches} · {money(t)}")


def cost_report(tally: UsageTally) -> Text:
    out = Text()
    total = tally.total()
    if not total.requests:
        out.append("no model request yet in this session")
        return out
    out.append("session: ", style="bold")
    out.append(_totals_line(total) + "\n")
    interrupted = tally.interrupted()
    if interrupted.requests:
        out.append("of which interrupted (billed too): ", style="bold")
        out.append(_totals_line(interrupted) + "\n")
    out.append("\nper turn\n", style="bold")
    for turn in tally.turns.values():
        out.append(f"  {clean(turn.turn_id):<6} ", style="bold")
        out.append(_totals_line(turn.finished) if turn.finished.requests else "no finished request")
        if turn.interrupted.requests:
            out.append(f"\n         interrupted: {_totals_line(turn.interrupted)}", style="dim")
        if turn.compaction.requests:
            out.append(f"\n         compaction: {_totals_line(turn.compaction)}", style="dim")
        out.append("\n")
    if total.web_search_requests:
        out.append(f"\nweb searches are billed per search (${WEB_SEARCH_USD * 1000:g} per "
                   "1,000), on top of the tokens: included in the cost above\n", style="dim")
    if total.estimated:
        out.append(f"\n{total.estimated} interrupted request(s) ended before the server said "
                   "their size: their input tokens and cost are estimated (about 4 bytes of "
                   "the request a token)\n", style="dim")
    if not total.price_known:
        out.append(f"\n{total.unpriced} request(s) used a model whose price is unknown: "
                   "the cost is not summed up", style="dim")
    return out


def permissions_report(facts: PermissionFacts) -> Text:
    out = Text()
    if facts.note:
        out.append(facts.note)
        return out
    out.append("mode: ", style="bold")
    out.append(f"{facts.mode}  ")
    out.append(f"(from {clean(facts.mode_source)})\n", style="dim")
    out.append("rules are applied in this order: deny, allowed for this session, ask, allow; "
               "then the mode decides\n", style="dim")
    if not facts.rules:
        out.append("\nno rules: the mode decides every call")
        return out
    out.append("\n")
    for fact in facts.rules:
        out.append(f"{KIND_WORDS.get(fact.kind, fact.kind)}  ", style="bold")
        out.append(clean(fact.rule))
        out.append(f"   {clean(fact.source)}\n", style="dim")
    return out


def mcp_report(statuses: list[Any] | None) -> Text:
    out = Text()
    if statuses is None:
        out.append("this session has no MCP manager")
        return out
    if not statuses:
        out.append("no MCP servers are configured (see docs/mcp.md: ~/.claude.json, "
                   "~/.config/agent-tui/mcp.json or the project's .mcp.json)")
        return out
    for status in statuses:
        out.append(clean(status.name), style="bold")
        out.append(f"  {status.state}  ", style="bold")
        out.append(f"{status.transport} {first_line(status.target, 120)}\n", style="dim")
        out.append(f"  from {clean(status.source)}\n", style="dim")
        if status.error:
            out.append(f"  error: {first_line(status.error, 300)}\n")
        if status.tools:
            out.append(f"  {len(status.tools)} tool(s): " + ", ".join(clean(t) for t in status.tools) + "\n")
        offers = [f"{n} {what}" for n, what in ((getattr(status, "resources", 0), "resource(s)"),
                                                 (getattr(status, "prompts", 0), "prompt(s)")) if n]
        if offers:
            out.append("  " + ", ".join(offers) + "\n")
        if getattr(status, "tool_timeout_s", None):
            out.append(f"  tool timeout: {status.tool_timeout_s:g} s\n", style="dim")
        if getattr(status, "task_tools", None):
            out.append("  as MCP tasks: " + ", ".join(f"{clean(t)} ({w})" for t, w in status.task_tools.items())
                       + f"; kept {status.task_ttl_s:g} s on the server\n", style="dim")
        if status.restarts:
            out.append(f"  restarted {status.restarts} time(s)\n", style="dim")
        if status.log:
            out.append(f"  log: {clean(status.log)}\n", style="dim")
    return out


def memory_report(memory: list[Any], problems: Sequence[Any] = ()) -> Text:
    """``/memory``: the memory files in the system prompt (imported ones with the file and
    line that import them), then what could not be loaded."""
    out = Text()
    if not memory:
        out.append("No AGENTS.md or CLAUDE.md is loaded. /init drafts one for this project.\n"
                   "A subfolder's own AGENTS.md joins once the agent works there.\n")
    for item in memory:
        cut = " (cut at 64 KiB)" if item.truncated else ""
        out.append(f"{item.scope}: {clean(item.path)}{cut}\n", style="bold")
        if getattr(item, "imported_from", None):
            out.append(f"  imported by {clean(item.imported_from)}:{item.line}\n", style="dim")
        out.append(clean(item.text) + "\n\n")
    if problems:
        out.append("not loaded\n", style="bold")
        for problem in problems:
            out.append(f"  {clean(str(problem))}\n")
    return out


def hooks_report(rows: list[Any]) -> Text:
    """``/hooks``: each hook in force, its event, matcher and where it came from."""
    if not rows:
        return Text("No hooks in force (settings key \"hooks\", see docs/hooks.md).")
    out = Text()
    for row in rows:
        out.append(f"{row.event} {row.matcher or '*'}: ", style="bold")
        out.append(f"{clean(row.command)} (timeout {row.timeout_s:g} s) from {clean(row.source)}\n")
    return out
