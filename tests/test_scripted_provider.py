"""The offline model (``--provider scripted``) through a real session: its tool ids,
which prompt it answers, and the built-in demo's words after send-now."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import psutil
import pytest

from agent_tui.core.calls.permission import AllowAll, Ruling
from agent_tui.protocol import (
    Decide,
    Decision,
    Interrupt,
    RestoreWhat,
    Rewind,
    SendNow,
    UserMessage,
    Verdict,
)
from agent_tui.providers import base
from agent_tui.providers.scripted import Block, Rule, Script, ScriptedProvider, load_script
from tests.harness import SlowTool, start_session

pytestmark = pytest.mark.asyncio

SCRIPT = Script(
    rules=[
        Rule(match="^slow", replies=[[Block(tool="slow", input={"note": "s"})], [Block(text="slow done")]]),
        Rule(match="^list", replies=[[Block(text="here is the list")]]),
    ],
    default=[[Block(text="default answer")]],
)


def replies(run: Any) -> list[str]:
    """The text of each assistant message, as the journal holds it."""
    out = []
    for record in run.journal.records:
        if getattr(record, "kind", "") == "assistant_message":
            out.append("".join(b.get("text", "") for b in record.blocks if b.get("type") == "text"))
    return out


async def tool_ids(provider: ScriptedProvider, messages: list[dict[str, Any]]) -> list[str]:
    request = base.ModelRequest(model="m", system="", messages=messages)
    return [e.id async for e in provider.stream(request) if isinstance(e, base.ToolUseStarted)]


async def test_tool_ids_are_unique_in_a_session_even_after_a_rewind(tmp_path):
    from tests.harness import QuickTool

    script = Script(rules=[Rule(match="^go", replies=[[Block(tool="quick", input={"note": "x"})],
                                                       [Block(text="went")]])])
    provider = ScriptedProvider(script, delay=0)
    run = start_session(provider, [QuickTool()], tmp_path)
    run.submit(UserMessage(text="go"))
    await run.idle()
    run.submit(Rewind(checkpoint_id="t1", restore=RestoreWhat.CONVERSATION))
    await run.rec.wait_type("rewound")
    run.submit(UserMessage(text="go"))
    await run.idle()
    ids = [e.tool_use_id for e in run.rec.of("tool_state") if e.state == "streaming"]
    assert len(ids) == 2 and ids[0] != ids[1], ids
    # A second provider (a resumed session) mints ids of its own too.
    same = [{"role": "user", "content": [{"type": "text", "text": "go"}]}]
    first = await tool_ids(ScriptedProvider(script, delay=0), same)
    second = await tool_ids(ScriptedProvider(script, delay=0), same)
    assert first and second and set(first).isdisjoint(second)
    await run.close()


async def test_the_prompt_after_an_interrupted_call_is_answered(tmp_path):
    slow = SlowTool()
    run = start_session(ScriptedProvider(SCRIPT, delay=0), [slow], tmp_path)
    run.submit(UserMessage(text="slow please"))
    await asyncio.wait_for(slow.started.wait(), 10)
    run.submit(Interrupt())
    await run.idle()
    assert run.rec.of("turn_ended")[-1].status == "cancelled"
    # The interrupted call's result rides in the same user message as this prompt.
    run.submit(UserMessage(text="list it"))
    await run.idle()
    assert replies(run)[-1] == "here is the list", replies(run)
    await run.close()


class AskAll(AllowAll):
    def check(self, tool: Any, args: Any) -> Ruling:
        return Ruling(verdict=Verdict.ASK, reason="test asks")

    def remember(self, tool: Any, args: Any) -> None:
        pass


async def test_the_prompt_after_a_denied_or_unanswered_call_is_answered(tmp_path):
    slow = SlowTool()
    run = start_session(ScriptedProvider(SCRIPT, delay=0), [slow], tmp_path, policy=AskAll())
    run.submit(UserMessage(text="slow please"))
    await run.rec.wait_type("permission_requested")
    run.submit(Decide(tool_use_id=run.rec.of("permission_requested")[-1].tool_use_id,
                      decision=Decision.DENY))
    await run.idle()
    assert replies(run)[-1].startswith("That tool call did not go through")
    run.submit(UserMessage(text="list it"))
    await run.idle()
    assert replies(run)[-1] == "here is the list", replies(run)

    # Interrupted while the prompt was open: the call never ran.
    run.submit(UserMessage(text="slow again"))
    await run.rec.wait_type("permission_requested", count=2)
    run.submit(Interrupt())
    await run.idle()
    run.submit(UserMessage(text="anything"))
    await run.idle()
    assert replies(run)[-1] == "default answer", replies(run)
    assert slow.calls == []
    await run.close()


async def test_a_steer_with_tool_results_is_acknowledged_and_the_script_goes_on(tmp_path):
    slow = SlowTool()
    run = start_session(ScriptedProvider(SCRIPT, delay=0), [slow], tmp_path)
    run.submit(UserMessage(text="slow please"))
    await asyncio.wait_for(slow.started.wait(), 10)
    run.submit(UserMessage(text="and hurry"))
    await run.rec.wait_type("steer_state")
    slow.release.set()
    await run.idle()
    assert replies(run)[-1] == 'Noted: "and hurry". slow done', replies(run)
    await run.close()


async def test_the_demo_says_the_build_runs_on_after_send_now(tmp_path):
    from agent_tui.tools.background import BackgroundJobs
    from agent_tui.tools.bash import BashTool

    marker = f"agent-tui-test-{uuid.uuid4().hex}"
    script = load_script()
    for rule in script.rules:  # the demo's build, with a marker to find its processes
        for reply in rule.replies:
            for block in reply:
                if block.tool == "bash" and "build" in block.input.get("command", ""):
                    command = block.input["command"].replace("sleep 1;", "sleep 0.2;")
                    block.input["command"] = f"{command} # {marker}"
    jobs = BackgroundJobs()
    run = start_session(ScriptedProvider(script, delay=0), [BashTool(jobs=jobs)], tmp_path)

    def alive() -> bool:
        return any(marker in " ".join(p.info["cmdline"] or [])
                   for p in psutil.process_iter(["cmdline"]))

    try:
        run.submit(UserMessage(text="run a slow build"))
        await run.rec.wait_for(lambda: run.rec.of("tool_output"), timeout=15)
        run.submit(SendNow(text="how is it going?"))
        await run.idle()
        said = replies(run)[-1]
        assert "finished by itself" not in said, said
        assert "background" in said and said.startswith('Noted: "how is it going?"'), said
        assert [j.state for j in jobs.jobs()] == ["running"]
    finally:
        await jobs.shutdown()
        await run.close()
    assert not alive()
