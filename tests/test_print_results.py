"""Print mode for scripts: the result object of ``--output-format json`` and the lines
that open and end a stream-json run, from the real ``agent-tui`` process against the
fake API."""

from __future__ import annotations

import json
import signal
import subprocess
import uuid

import pytest

from agent_tui.core.calls.permission import AllowAll
from agent_tui.core.usage.pricing import PriceTable
from agent_tui.protocol import PermissionMode
from tests.fake_api import Reply
from tests.forked_runs import popen_agent
from tests.print_agent import events_of, marked, wait_until
from tests.print_agent import api_env, only_json, run

PRICED = "claude-haiku-4-5"  # a model the price table knows
RESULT_KEYS = {"type", "subtype", "is_error", "result", "session_id", "num_turns",
               "duration_ms", "duration_api_ms", "total_cost_usd", "usage",
               "permission_denials", "errors"}


def api_usage(fake_api) -> dict[str, object]:
    keys = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens",
            "output_tokens")
    usage: dict[str, object] = {k: sum(getattr(u, k) for u in fake_api.usage) for k in keys}
    usage["server_tool_use"] = {
        "web_search_requests": sum(u.web_search_requests for u in fake_api.usage)}
    return usage


def test_json_output_is_one_result_object_with_the_answer_usage_and_cost(fake_api, tmp_path):
    fake_api.enqueue(Reply.tool_use("read_file", {"path": "notes.txt"}, text_before="Reading."),
                     Reply.text("The notes say hello."))
    (tmp_path / "notes.txt").write_text("hello\n")
    out = run(tmp_path, fake_api, "-p", "what do the notes say?", "--output-format", "json",
              "--model", PRICED)
    assert out.returncode == 0, out.stderr
    result = only_json(out.stdout)
    assert set(result) == RESULT_KEYS
    assert result["type"] == "result" and result["subtype"] == "success"
    assert result["is_error"] is False and result["errors"] == []
    assert result["result"] == "The notes say hello."
    assert result["num_turns"] == 2 == len(fake_api.requests)
    assert result["usage"] == api_usage(fake_api)
    prices = PriceTable()
    expected = sum(prices.cost(PRICED, input_tokens=u.input_tokens, output_tokens=u.output_tokens,
                               cache_read_input_tokens=u.cache_read_input_tokens,
                               cache_creation_input_tokens=u.cache_creation_input_tokens)
                   for u in fake_api.usage)
    assert result["total_cost_usd"] == pytest.approx(expected) and expected > 0
    assert result["permission_denials"] == []
    assert 0 <= result["duration_api_ms"] <= result["duration_ms"]
    # the session id is the saved session's: a script can resume it
    assert (tmp_path / "home" / "sessions" / result["session_id"] / "journal.jsonl").is_file()
    assert "[read_file" in out.stderr  # tool states still go to stderr


def test_json_output_cost_is_null_when_the_price_is_unknown(fake_api, tmp_path):
    fake_api.enqueue(Reply.text("hi"))
    out = run(tmp_path, fake_api, "-p", "hi", "--output-format", "json",
              "--model", "claude-test")
    assert out.returncode == 0, out.stderr
    result = only_json(out.stdout)
    assert result["total_cost_usd"] is None
    assert result["usage"]["output_tokens"] > 0


def test_a_resumed_session_answers_with_the_id_the_result_gave(fake_api, tmp_path):
    fake_api.enqueue(Reply.text("first"), Reply.text("second"))
    first = only_json(run(tmp_path, fake_api, "-p", "one", "--output-format", "json").stdout)
    out = run(tmp_path, fake_api, "-p", "two", "--output-format", "json",
              "--resume", first["session_id"])
    second = only_json(out.stdout)
    assert second["session_id"] == first["session_id"] and second["result"] == "second"
    assert second["num_turns"] == 1  # this run's requests, not the session's
    assert [m["role"] for m in fake_api.requests[1]["messages"]] == ["user", "assistant", "user"]


def test_json_output_of_a_failed_request_is_an_error_result_and_exit_one(fake_api, tmp_path):
    fake_api.enqueue(Reply.error(401, "authentication_error", "invalid x-api-key"))
    out = run(tmp_path, fake_api, "-p", "hi", "--output-format", "json")
    assert out.returncode == 1
    result = only_json(out.stdout)
    assert result["subtype"] == "error_during_execution" and result["is_error"] is True
    assert any("invalid x-api-key" in e for e in result["errors"])
    assert result["result"] == ""
    assert "invalid x-api-key" in out.stderr


def test_stream_json_opens_with_session_started_and_ends_with_the_result(fake_api, tmp_path):
    fake_api.enqueue(Reply.text("streamed answer"))
    out = run(tmp_path, fake_api, "-p", "hi", "--output-format", "stream-json",
              "--model", PRICED)
    assert out.returncode == 0, out.stderr
    events = events_of(out.stdout)
    started, result = events[0], events[-1]
    assert set(started) == {"type", "session_id", "model", "cwd", "permission_mode", "tools"}
    assert started["type"] == "session_started" and started["model"] == PRICED
    assert started["cwd"] == str(tmp_path.resolve()) and started["permission_mode"] == "ask"
    assert {"bash", "read_file", "edit_file"} <= set(started["tools"])
    assert set(result) == RESULT_KEYS and result["type"] == "result"
    assert result["session_id"] == started["session_id"] and result["result"] == "streamed answer"
    # the events between are the ones stream-json has always carried, and the response's
    # start (with its usage) before its first text
    assert [e["type"] for e in events[1:-1]][:3] == ["turn_started", "response_started", "text_delta"]
    opened = events[2]
    assert opened["message_id"].startswith("msg_") and opened["input_tokens"] > 0, opened
    assert events[-3]["type"] == "turn_ended" and events[-2]["type"] == "session_closed"


def test_stream_json_notices_from_building_the_session_come_after_the_first_line(fake_api, tmp_path):
    (tmp_path / ".agent-tui").mkdir()
    (tmp_path / ".agent-tui" / "settings.json").write_text("{not json")
    fake_api.enqueue(Reply.text("ok"))
    out = run(tmp_path, fake_api, "-p", "hi", "--output-format", "stream-json")
    assert out.returncode == 0, out.stderr
    events = events_of(out.stdout)
    assert events[0]["type"] == "session_started"
    assert any(e["type"] == "notice" and "settings.json" in e["text"] for e in events[1:])


def test_json_output_with_stream_json_input_is_a_usage_error(fake_api, tmp_path):
    out = run(tmp_path, fake_api, "-p", "--input-format", "stream-json", "--output-format", "json",
              input='{"type":"user_message","text":"hi"}\n')
    assert out.returncode == 1
    assert out.stdout == ""
    assert "--input-format stream-json needs --output-format stream-json" in out.stderr
    assert fake_api.requests == []


def test_stream_json_input_ends_with_one_result_for_the_run(fake_api, tmp_path):
    fake_api.enqueue(Reply.text("one"), Reply.text("two"))
    ops = "".join(json.dumps({"type": "user_message", "text": t}) + "\n" for t in ("a", "b"))
    out = run(tmp_path, fake_api, "-p", "--input-format", "stream-json",
              "--output-format", "stream-json", input=ops)
    assert out.returncode == 0, out.stderr
    events = events_of(out.stdout)
    results = [e for e in events if e["type"] == "result"]
    assert results == [events[-1]]
    assert results[0]["num_turns"] == 2 and results[0]["result"] == "two"


def test_json_output_of_an_interrupted_run_exits_130_with_an_error_result(fake_api, tmp_path):
    marker = f"agent-tui-test-{uuid.uuid4().hex}"
    fake_api.enqueue(Reply.tool_use("bash", {"command": f"sleep 300; : {marker}"}))
    proc = popen_agent(
        ["-p", "run it", "--output-format", "json", "--permission-mode", "auto",
         "--cwd", str(tmp_path)],
        env=api_env(tmp_path, fake_api), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert wait_until(lambda: marked(marker)), "the command never started"
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, stderr
    result = only_json(stdout)
    assert result["subtype"] == "error_during_execution" and result["is_error"] is True
    assert result["num_turns"] == 1 and result["errors"]


# -- nobody to ask: refused, listed, never waited for --------------------------------------------


def test_ask_mode_refuses_lists_the_denials_and_goes_on(fake_api, tmp_path):
    fake_api.enqueue(
        Reply.tool_uses([("write_file", {"path": "new.txt", "content": "x"}, "toolu_w"),
                         ("bash", {"command": "rm -rf build"}, "toolu_b")]),
        Reply.text("I could not write it."))
    out = run(tmp_path, fake_api, "-p", "write it", "--output-format", "json")
    assert out.returncode == 0, out.stderr
    result = only_json(out.stdout)
    assert result["subtype"] == "success" and result["result"] == "I could not write it."
    assert result["permission_denials"] == [
        {"tool_name": "Write", "tool_use_id": "toolu_w",
         "tool_input": {"file_path": str(tmp_path.resolve() / "new.txt"), "content": "x"}},
        {"tool_name": "Bash", "tool_use_id": "toolu_b", "tool_input": {"command": "rm -rf build"}},
    ]
    assert not (tmp_path / "new.txt").exists()
    told = [b for b in fake_api.requests[1]["messages"][-1]["content"] if b["type"] == "tool_result"]
    assert all("print mode" in b["content"] for b in told)


def test_a_sub_agents_refused_call_is_listed_too(fake_api, tmp_path):
    fake_api.enqueue(
        Reply.tool_use("task", {"description": "helper", "prompt": "touch it"}, id="toolu_task"),
        Reply.tool_use("bash", {"command": "touch sub"}, id="toolu_sub"),
        Reply.text("the helper could not"),
        Reply.text("done"))
    out = run(tmp_path, fake_api, "-p", "delegate", "--output-format", "json",
              "--allowedTools", "task")
    assert out.returncode == 0, out.stderr
    result = only_json(out.stdout)
    assert [d["tool_use_id"] for d in result["permission_denials"]] == ["toolu_sub"]
    assert result["result"] == "done"
    assert result["num_turns"] == 2 and len(fake_api.requests) == 4  # its steps are the task's
    assert not (tmp_path / "sub").exists()


class _AlwaysAsks(AllowAll):
    """A policy that asks about everything, even with no one to ask (as a bug would)."""

    mode = PermissionMode.ASK

    def check(self, tool, args):
        from agent_tui.core.calls.permission import Ruling
        from agent_tui.protocol import Verdict

        return Ruling(verdict=Verdict.ASK, rule="mode:ask", reason="asks")

    def remember(self, tool, args) -> None:
        pass


def test_a_permission_question_that_reaches_print_mode_is_refused_not_waited_for(
        tmp_path, capsys):
    import asyncio

    from agent_tui.core.services.deps import AgentConfig, SessionDeps
    from agent_tui.core.journal.journal import Journal
    from agent_tui.core.session.session import Session
    from agent_tui.core.calls.tool import ToolSet
    from agent_tui.headless import run_print
    from agent_tui.providers.scripted import ScriptedProvider
    from agent_tui.tools.registry import default_tools

    def make_session(emit):
        tools: ToolSet = default_tools(tmp_path)
        deps = SessionDeps(config=AgentConfig(workspace=tmp_path, model="scripted"),
                           provider=ScriptedProvider(delay=0), tools=tools,
                           policy=_AlwaysAsks(), journal=Journal(), emit=emit)
        return Session(deps)

    code = asyncio.run(asyncio.wait_for(run_print(
        make_session, prompt="list files", output_format="json", input_format="text"), 30))
    result = only_json(capsys.readouterr().out)
    assert code == 0 and result["subtype"] == "success"
    assert [d["tool_name"] for d in result["permission_denials"]] == ["Bash"]


def test_a_web_search_counts_in_the_usage_and_the_cost_and_asks_or_is_refused(fake_api, tmp_path):
    (tmp_path / ".agent-tui").mkdir()
    (tmp_path / ".agent-tui" / "settings.json").write_text('{"webSearch": {"enabled": true}}')
    found = [("Python 3.14", "https://docs.python.org/3.14/whatsnew/3.14.html")]
    fake_api.enqueue(Reply.tool_use("web_search", {"query": "python 3.14"}),
                     Reply.web_search("python 3.14", found, "It is out.", cite=[0]),
                     Reply.text("Python 3.14 is out."))
    out = run(tmp_path, fake_api, "-p", "is python 3.14 out?", "--output-format", "json",
              "--model", PRICED, "--permission-mode", "auto")
    assert out.returncode == 0, out.stderr
    result = only_json(out.stdout)
    assert result["usage"] == api_usage(fake_api)
    assert result["usage"]["server_tool_use"] == {"web_search_requests": 1}
    prices = PriceTable()
    expected = sum(prices.cost(PRICED, input_tokens=u.input_tokens, output_tokens=u.output_tokens,
                               cache_read_input_tokens=u.cache_read_input_tokens,
                               cache_creation_input_tokens=u.cache_creation_input_tokens,
                               web_search_requests=u.web_search_requests)
                   for u in fake_api.usage)
    assert result["total_cost_usd"] == pytest.approx(expected) and expected > 0.01
    # without a mode or a rule that allows it, print mode has nobody to ask: refused
    fake_api.enqueue(Reply.tool_use("web_search", {"query": "python 3.14"}),
                     Reply.text("I could not search."))
    searched = len(fake_api.requests)
    out = run(tmp_path, fake_api, "-p", "search again", "--output-format", "json")
    result = only_json(out.stdout)
    assert [d["tool_name"] for d in result["permission_denials"]] == ["WebSearch"]
    assert len(fake_api.requests) == searched + 2  # the turn's two requests, no search
    assert result["usage"]["server_tool_use"] == {"web_search_requests": 0}
