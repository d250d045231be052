"""A session with checkpoints on the scripted model, for rewind tests: it writes a
file, changes files from the shell, or edits one, as the message asks."""

from __future__ import annotations

from agent_tui.checkpoints import Checkpoints
from agent_tui.core.services.deps import AgentConfig, SessionDeps
from agent_tui.core.journal.journal import Journal
from agent_tui.core.calls.permission import AllowAll
from agent_tui.core.session.session import Session
from agent_tui.protocol import UserMessage
from agent_tui.providers.scripted import Block, Rule, Script, ScriptedProvider
from agent_tui.tools.registry import default_tools
from tests.harness import Recorder, Running


SCRIPT = Script(
    rules=[
        Rule(match="^write", replies=[
            [Block(tool="write_file", input={"path": "a.txt", "content": "one\n"})],
            [Block(text="wrote a.txt")],
        ]),
        Rule(match="^shell", replies=[
            [Block(tool="bash", input={
                "command": "sed -i s/one/two/ a.txt && echo new > b.txt && rm keep.txt"
            })],
            [Block(text="changed things")],
        ]),
        Rule(match="^edit", replies=[
            [Block(tool="edit_file", input={"path": "a.txt", "old_string": "one", "new_string": "uno"})],
            [Block(text="edited")],
        ]),
    ],
    default=[[Block(text="hello")]],
)


def start(tmp_path) -> tuple[Running, Checkpoints]:
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    (workspace / "keep.txt").write_text("keep me\n")
    checkpoints = Checkpoints(tmp_path / "state" / "checkpoints", workspace)
    rec = Recorder()
    journal = Journal()
    deps = SessionDeps(
        config=AgentConfig(workspace=workspace, model="m"),
        provider=ScriptedProvider(SCRIPT, delay=0),
        tools=default_tools(
            workspace,
            on_before_write=checkpoints.record_pre_image,
            on_after_write=checkpoints.record_written,
        ),
        policy=AllowAll(),
        journal=journal,
        emit=rec,
        checkpoints=checkpoints,
    )
    return Running(Session(deps), rec, journal), checkpoints


async def turn(run: Running, text: str) -> None:
    run.submit(UserMessage(text=text))
    await run.idle()
    assert run.rec.of("turn_ended")[-1].status == "completed", run.rec.summary()
