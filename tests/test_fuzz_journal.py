"""Journal fuzzing: a real session's journal, cut short and bit-flipped, then ``--continue``.

A session is recorded once with the real wiring (journal, checkpoints, real tools) on
the scripted model. Hypothesis then damages a copy of its journal (a truncation at
any byte, and up to four flipped bits anywhere) and resumes it the way
``agent-tui --continue`` does. The session either

- resumes: a notice names every line that was set aside, every result whose line
  (and call) survived reaches the model exactly as recorded, and the first request
  passes the strict validator of ``tests/fake_api``; a turn runs to its end; or
- refuses with a clear message (no saved session found for the workspace);

and it never crashes.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from agent_tui.core.history.history import check_model_view, model_view, result_wording
from agent_tui.core.journal.journal import Journal
from agent_tui.core.journal.journal_lines import parse_line
from agent_tui.core.journal.records import AssistantMessageRecord, ToolResultRecord
from agent_tui.protocol import Shutdown, UserMessage
from agent_tui.providers import base
from tests.fake_api import validate_messages
from tests.harness import Recorder

SCRIPT = {"rules": [
    {"match": "^write", "replies": [[{"tool": "write_file",
                                      "input": {"path": "a.txt", "content": "new\n"}}],
                                    [{"text": "written"}]]},
    {"match": "^run", "replies": [[{"tool": "read_file", "input": {"path": "seed.txt"}},
                                   {"tool": "bash", "input": {"command": "echo ran"}}],
                                  [{"text": "ran"}]]},
], "default": [[{"text": "carrying on"}]]}


class Validating(base.Provider):
    """The scripted model behind the strict validator: each request as the SDK would
    send it must pass, or the test fails."""

    name = "scripted"
    default_model = "scripted"

    def __init__(self, inner: base.Provider) -> None:
        self.inner = inner
        self.requests: list[dict[str, Any]] = []
        self.problems: list[str] = []

    async def stream(self, request: base.ModelRequest):  # type: ignore[override]
        body = {"model": request.model, "max_tokens": request.max_tokens,
                "messages": request.messages, "tools": request.tools, "stream": True}
        if request.system:
            body["system"] = request.system
        self.requests.append(json.loads(json.dumps(body)))
        problem = validate_messages(body)
        if problem:
            self.problems.append(problem)
        async for event in self.inner.stream(request):
            yield event

    async def aclose(self) -> None:
        await self.inner.aclose()


def _options(workspace: Path, script: Path, *, resume: bool) -> Any:
    from agent_tui.cli.options import Options

    return Options(provider="scripted", model=None, cwd=workspace, permission_mode="auto",
                   theme=None, resume=None, continue_=resume, script=script, prompt=None,
                   print_mode=True, output_format="stream-json", input_format="stream-json")


async def _run(session: Any, rec: Recorder, texts: list[str]) -> None:
    task = asyncio.create_task(session.run())
    try:
        for text in texts:
            ended = len(rec.of("turn_ended"))
            session.submit(UserMessage(text=text))
            await rec.wait_for(lambda: len(rec.of("turn_ended")) > ended, timeout=30)
            await asyncio.wait_for(session.wait_idle(), 30)
    finally:
        session.submit(Shutdown())
        await asyncio.wait_for(task, 30)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    """One real session of three turns; its home is copied for every example."""
    from agent_tui.cli.wiring import Wiring

    root = tmp_path_factory.mktemp("recorded")
    workspace = root / "ws"
    workspace.mkdir()
    (workspace / "seed.txt").write_text("seed\n")
    script = root / "script.json"
    script.write_text(json.dumps(SCRIPT))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("AGENT_TUI_HOME", str(root / "home"))
        mp.setenv("HOME", str(root))
        mp.setenv("AGENT_TUI_SCRIPTED_DELAY", "0")
        rec = Recorder()
        session = Wiring(_options(workspace, script, resume=False), interactive=False) \
            .make_session(rec)
        asyncio.run(_run(session, rec, ["write it", "run it", "write it again"]))
    journal = next((root / "home" / "sessions").glob("*/journal.jsonl"))
    return Recorded(root=root, workspace=workspace, script=script, journal=journal,
                    bytes=journal.read_bytes())


class Recorded(dict):  # type: ignore[type-arg]
    """The recorded session's paths and journal bytes (shown short in a failure)."""

    def __repr__(self) -> str:
        return f"<recorded session, journal of {len(self['bytes'])} bytes>"


def _damage(data: bytes, cut: int | None, flips: list[int]) -> bytes:
    out = bytearray(data if cut is None else data[:cut])
    for bit in flips:
        if out:
            out[(bit // 8) % len(out)] ^= 1 << (bit % 8)
    return bytes(out)


def _resume(recorded: dict[str, Any], home: Path) -> tuple[Any, Recorder, Validating]:
    from agent_tui.cli import wiring
    from agent_tui.providers.scripted import ScriptedProvider, load_script

    provider = Validating(ScriptedProvider(load_script(recorded["script"]), delay=0))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("AGENT_TUI_HOME", str(home))
        mp.setenv("HOME", str(recorded["root"]))
        mp.setattr(wiring, "make_provider", lambda opts, **_: provider)
        rec = Recorder()
        wired = wiring.Wiring(_options(recorded["workspace"], recorded["script"], resume=True),
                              interactive=False)
        return wired.make_session(rec), rec, provider


def check_damaged_journal(recorded: dict[str, Any], tmp_path: Path, damaged: bytes) -> None:
    from agent_tui.cli.options import UsageError

    home = tmp_path / "home"
    if home.exists():
        shutil.rmtree(home)
    session_dir = home / "sessions" / recorded["journal"].parent.name
    session_dir.mkdir(parents=True)
    (session_dir / "journal.jsonl").write_bytes(damaged)
    try:
        session, rec, provider = _resume(recorded, home)
    except UsageError as exc:
        assert "no saved session for workspace" in str(exc), exc  # a clear refusal
        return
    asyncio.run(_run(session, rec, ["carry on"]))

    # Every line that did not survive byte for byte is named.
    kept = set(damaged.split(b"\n")) & set(recorded["bytes"].split(b"\n"))
    notices = [n.text for n in rec.of("notice")]
    lost = [(n, line) for n, line in enumerate(recorded["bytes"].split(b"\n"), 1)
            if line and line not in kept]
    if lost:
        assert any("set aside" in t for t in notices) or len(damaged) < len(recorded["bytes"]), \
            (lost[:3], notices)
    set_aside = Journal.load(session_dir / "journal.jsonl")  # after the resume appended
    for record in set_aside.damaged:
        assert record.torn or any(f"line {record.line}" in t for t in notices), (record, notices)

    # The resumed turn ran, and its first request was valid.
    assert rec.of("turn_ended") and rec.of("turn_ended")[-1].status == "completed", \
        rec.summary()
    assert not [t for t in notices if "internal error" in t], notices
    assert provider.problems == [], provider.problems
    first = provider.requests[0]
    check_model_view(first["messages"])

    # Each surviving result of a surviving call reaches the model as recorded.
    survivors = [r for r, _ in (parse_line(line) for line in kept if line.strip()) if r]
    calls = {b["id"] for r in survivors if isinstance(r, AssistantMessageRecord)
             for b in r.blocks if b.get("type") == "tool_use"}
    sent = {b["tool_use_id"]: b for m in first["messages"] if isinstance(m["content"], list)
            for b in m["content"] if b.get("type") == "tool_result"}
    for record in survivors:
        if isinstance(record, ToolResultRecord) and record.tool_use_id in calls:
            text, is_error = result_wording(record)
            block = sent.get(record.tool_use_id)
            assert block is not None, f"the result of {record.tool_use_id} was dropped"
            assert block["content"] == (text or "(no output)"), block
            assert bool(block.get("is_error")) == is_error
    model_view(session.records())


@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
@example(data=None)  # the undamaged journal resumes as it is
def test_a_cut_or_bit_flipped_journal_resumes_with_what_was_set_aside_named_or_refuses_clearly(
        recorded: dict[str, Any], tmp_path: Path, data: Any) -> None:
    size = len(recorded["bytes"])
    if data is None:
        cut, flips = None, []
    else:
        cut = data.draw(st.none() | st.integers(0, size), label="cut")
        flips = data.draw(st.lists(st.integers(0, size * 8 - 1), max_size=4), label="flips")
    check_damaged_journal(recorded, tmp_path, _damage(recorded["bytes"], cut, flips))


# -- failures the fuzzing found, kept -----------------------------------------------------


def _flip_in_line(recorded: Recorded, line: int, find: bytes, bit: int = 0) -> bytes:
    """The journal with one bit flipped in line ``line``, at the first ``find`` there."""
    lines = recorded["bytes"].split(b"\n")
    at = lines[line - 1].index(find)
    damaged = bytearray(lines[line - 1])
    damaged[at] ^= 1 << bit
    lines[line - 1] = bytes(damaged)
    return b"\n".join(lines)


def test_losing_the_first_user_message_keeps_the_results_of_the_calls_after_it(
        recorded: Recorded, tmp_path: Path) -> None:
    # The model view used to drop a reply with no prompt before it, and with it the
    # results of its calls, without a word.
    lines = recorded["bytes"].split(b"\n")
    first = next(n for n, line in enumerate(lines, 1) if b'"kind":"user_message"' in line)
    check_damaged_journal(recorded, tmp_path, _flip_in_line(recorded, first, b'"text"'))


def test_a_flip_in_a_line_s_checksum_key_sets_the_line_aside(
        recorded: Recorded, tmp_path: Path) -> None:
    # "crc" flipped to "brc": the line looks like one written before lines had a
    # checksum; after a checked line it must still be set aside.
    lines = recorded["bytes"].split(b"\n")
    call = next(n for n, line in enumerate(lines, 1) if b'"kind":"assistant_message"' in line)
    damaged = _flip_in_line(recorded, call, b'crc":')
    path = tmp_path / "journal.jsonl"
    path.write_bytes(damaged)
    assert [d.line for d in Journal.load(path).damaged] == [call]
    check_damaged_journal(recorded, tmp_path, damaged)


def test_a_flip_that_makes_the_first_line_s_checksum_unreadable_sets_the_line_aside(
        recorded: Recorded, tmp_path: Path) -> None:
    # A checksum digit turned into a letter that is no hex digit: the first line then
    # looked like one written before lines had a checksum, and was taken silently.
    lines = recorded["bytes"].split(b"\n")
    tail = lines[0].rindex(b'"}')
    damaged = bytearray(lines[0])
    damaged[tail - 1] = ord("x")
    lines[0] = bytes(damaged)
    damaged_bytes = b"\n".join(lines)
    path = tmp_path / "journal.jsonl"
    path.write_bytes(damaged_bytes)
    assert [d.line for d in Journal.load(path).damaged] == [1]
    check_damaged_journal(recorded, tmp_path, damaged_bytes)
