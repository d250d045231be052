"""ACP session modes: the permission modes as an editor sees them. The SDK's client
drives the real ``agent-tui acp`` process against the fake API: session/new offers
the modes, session/set_mode switches (plan mode then refuses a write the model
tries; dontAsk refuses a command without asking the editor), an approved exit_plan_mode is a permission request whose approval switches
the mode back, told as current_mode_update."""

from __future__ import annotations

import asyncio

import pytest
from acp import PROTOCOL_VERSION, RequestError, text_block
from acp.schema import AllowedOutcome, RequestPermissionResponse

from tests.fake_api import Reply
from tests.acp_client import RecordingClient, spawn

ALLOW_ONCE = RequestPermissionResponse(outcome=AllowedOutcome(option_id="allow_once",
                                                              outcome="selected"))


async def _new(conn, cwd) -> tuple[str, object]:
    await conn.initialize(protocol_version=PROTOCOL_VERSION)
    session = await conn.new_session(cwd=str(cwd), mcp_servers=[])
    return session.session_id, session.modes


@pytest.mark.asyncio
async def test_modes_are_offered_and_plan_mode_refuses_a_write(tmp_path, fake_api):
    fake_api.enqueue(Reply.tool_use("write_file", {"path": "x.txt", "content": "x"}),
                     Reply.text("planned"))
    client = RecordingClient()
    async with spawn(client, tmp_path, fake_api, "--permission-mode", "accept-edits") as (conn, _):
        sid, modes = await _new(conn, tmp_path)
        assert modes.current_mode_id == "accept-edits"
        assert [m.id for m in modes.available_modes] == [
            "ask", "accept-edits", "plan", "auto", "dont-ask"]
        await conn.set_session_mode(session_id=sid, mode_id="plan")
        await client.wait_for(lambda: client.of("current_mode_update", sid))
        assert client.of("current_mode_update", sid)[-1].current_mode_id == "plan"
        response = await asyncio.wait_for(
            conn.prompt(session_id=sid, prompt=[text_block("write it")]), 20)
        assert response.stop_reason == "end_turn"
        with pytest.raises(RequestError):
            await conn.set_session_mode(session_id=sid, mode_id="yolo")
    assert not (tmp_path / "x.txt").exists()
    result = fake_api.requests[1]["messages"][-1]["content"][0]
    assert result["type"] == "tool_result" and "plan mode" in result["content"]


@pytest.mark.asyncio
async def test_dont_ask_by_claude_codes_word_refuses_without_asking_the_editor(tmp_path, fake_api):
    fake_api.enqueue(Reply.tool_use("bash", {"command": "touch x"}, id="toolu_x"),
                     Reply.text("refused"))
    client = RecordingClient()
    async with spawn(client, tmp_path, fake_api) as (conn, _):
        sid, modes = await _new(conn, tmp_path)
        assert modes.current_mode_id == "ask"
        await conn.set_session_mode(session_id=sid, mode_id="dontAsk")
        await client.wait_for(lambda: client.of("current_mode_update", sid))
        assert client.of("current_mode_update", sid)[-1].current_mode_id == "dont-ask"
        response = await asyncio.wait_for(
            conn.prompt(session_id=sid, prompt=[text_block("touch it")]), 20)
        assert response.stop_reason == "end_turn"
    assert client.permission_requests == [] and not (tmp_path / "x").exists()
    result = fake_api.requests[1]["messages"][-1]["content"][0]
    assert result["tool_use_id"] == "toolu_x"
    assert "permission mode dontAsk denies Bash without asking" in str(result["content"])


@pytest.mark.asyncio
async def test_an_approved_plan_is_told_as_a_mode_update(tmp_path, fake_api):
    fake_api.enqueue(Reply.tool_use("exit_plan_mode", {"plan": "1. write x.txt"}),
                     Reply.tool_use("write_file", {"path": "x.txt", "content": "x"}),
                     Reply.text("done"))
    client = RecordingClient()
    async with spawn(client, tmp_path, fake_api, "--permission-mode", "plan") as (conn, _):
        sid, modes = await _new(conn, tmp_path)
        assert modes.current_mode_id == "plan"
        prompt = asyncio.create_task(conn.prompt(session_id=sid, prompt=[text_block("plan it")]))
        await client.wait_for(lambda: client.permission_requests)
        client.answers.put_nowait(ALLOW_ONCE)  # the plan: approved, back to ask
        await client.wait_for(lambda: len(client.permission_requests) == 2)
        client.answers.put_nowait(ALLOW_ONCE)  # the write, asked in ask mode
        response = await asyncio.wait_for(prompt, 20)
        assert response.stop_reason == "end_turn"
        assert [u.current_mode_id for u in client.of("current_mode_update", sid)] == ["ask"]
    assert (tmp_path / "x.txt").read_text() == "x"


@pytest.mark.asyncio
async def test_the_model_is_a_config_option_the_editor_can_switch(tmp_path, fake_api):
    fake_api.enqueue(Reply.text("on the other model"))
    client = RecordingClient()
    async with spawn(client, tmp_path, fake_api, "--model", "claude-sonnet-4-5") as (conn, _):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        sid = session.session_id
        (option,) = session.config_options
        assert option.id == "model" and option.category == "model"
        assert option.current_value == "claude-sonnet-4-5"
        offered = [o.value for o in option.options]
        other = next(m for m in offered if m != "claude-sonnet-4-5")
        answer = await conn.set_config_option(config_id="model", session_id=sid, value=other)
        assert answer.config_options[0].current_value == other
        updates = client.of("config_option_update", sid)
        assert updates and updates[-1].config_options[0].current_value == other
        with pytest.raises(RequestError) as raised:
            await conn.set_config_option(config_id="model", session_id=sid, value="claude-nope-9")
        assert "unknown model" in str(raised.value.data)
        await conn.prompt(session_id=sid, prompt=[text_block("hi")])
    assert fake_api.requests[-1]["model"] == other


@pytest.mark.asyncio
async def test_a_switch_takes_a_refusal_by_its_code_even_when_it_names_the_provider_s_id():
    """A cloud maps an alias (``opus``) to its own id: the refusal names that id, and is
    still the switch's answer at once; another error meanwhile is not."""
    from agent_tui.acp.models import ModelChoice
    from agent_tui.protocol import Notice, NoticeCode, NoticeLevel

    choice = ModelChoice(lambda op: None, "claude-sonnet-4-5")
    switching = asyncio.ensure_future(choice.choose("opus"))
    await asyncio.sleep(0)
    choice.on_error(Notice(level=NoticeLevel.ERROR, text="journal write failed: 'opus' said"))
    await asyncio.sleep(0)
    assert not switching.done()  # not an answer: not a refusal
    choice.on_error(Notice(level=NoticeLevel.ERROR, code=NoticeCode.MODEL_REFUSED,
                           text="unknown model 'anthropic.claude-opus-4-5-v1:0' ('opus' here)"))
    with pytest.raises(RequestError) as raised:
        await asyncio.wait_for(switching, 1)
    assert "anthropic.claude-opus" in str(raised.value.data)
    assert choice.current == "claude-sonnet-4-5"
