"""Rewind through the session: checkpoints at user messages, code and conversation."""

from __future__ import annotations

import pytest

from agent_tui.protocol import ListRewindPoints, PlanRewind, RestoreWhat, Rewind, UserMessage
from agent_tui.core.history.history import REWIND_NOTE, check_model_view, model_view
from tests.rewind_support import start, turn

pytestmark = pytest.mark.asyncio


async def test_rewind_code_and_conversation_after_file_and_shell_edits(tmp_path):
    run, _ = start(tmp_path)
    ws = tmp_path / "ws"
    await turn(run, "write it")
    await turn(run, "shell it")
    assert (ws / "a.txt").read_text() == "two\n"
    assert (ws / "b.txt").exists() and not (ws / "keep.txt").exists()

    run.submit(PlanRewind(checkpoint_id="t1"))
    await run.rec.wait_type("rewind_plan")
    plan = run.rec.of("rewind_plan")[-1]
    kinds = {c.path: c.kind for c in plan.changes}
    assert kinds == {"a.txt": "deleted", "b.txt": "deleted", "keep.txt": "added"}
    assert any(line.startswith("$ sed -i") for line in plan.not_undoable)

    run.submit(Rewind(checkpoint_id="t1", restore=RestoreWhat.BOTH))
    await run.rec.wait_type("rewound")
    await run.idle()
    rewound = run.rec.of("rewound")[-1]
    assert rewound.text == "write it"  # back to the input box
    assert rewound.skipped_conflicts == [] and rewound.errors == [], rewound
    assert not (ws / "a.txt").exists() and not (ws / "b.txt").exists()
    assert (ws / "keep.txt").read_text() == "keep me\n"
    assert model_view(run.journal.records) == []  # back before "write it"
    await turn(run, "hi again")
    view = run.model_view()
    assert view[0] == {"role": "user", "content": [{"type": "text", "text": "hi again"}]}
    # The journal keeps the rewound branch.
    texts = [r.text for r in run.journal.records if getattr(r, "kind", "") == "user_message"]
    assert texts == ["write it", "shell it", "hi again"]
    await run.close()


async def test_conversation_only_keeps_files_and_tells_the_model(tmp_path):
    run, _ = start(tmp_path)
    await turn(run, "write it")
    await turn(run, "edit it")
    run.submit(Rewind(checkpoint_id="t2", restore=RestoreWhat.CONVERSATION))
    await run.rec.wait_type("rewound")
    await run.idle()
    assert (tmp_path / "ws" / "a.txt").read_text() == "uno\n"
    await turn(run, "what now")
    view = run.model_view()
    last = view[-2]["content"]  # the user message before the final answer
    assert [b["text"] for b in last if b["type"] == "text"] == [REWIND_NOTE, "what now"]
    assert all("edit it" not in str(m) for m in view)
    await run.close()


async def test_code_only_keeps_the_conversation(tmp_path):
    run, _ = start(tmp_path)
    await turn(run, "write it")
    await turn(run, "edit it")
    run.submit(Rewind(checkpoint_id="t2", restore=RestoreWhat.CODE))
    await run.rec.wait_type("rewound")
    await run.idle()
    assert (tmp_path / "ws" / "a.txt").read_text() == "one\n"
    view = run.model_view()
    assert any("edit it" in str(m) for m in view)
    await turn(run, "and now")
    texts = [b["text"] for b in run.model_view()[-2]["content"] if b["type"] == "text"]
    assert texts == [REWIND_NOTE, "and now"]
    await run.close()


async def test_conflicting_change_is_not_overwritten_without_asking(tmp_path):
    run, _ = start(tmp_path)
    await turn(run, "write it")
    await turn(run, "edit it")
    (tmp_path / "ws" / "a.txt").write_text("the user's own change\n")
    run.submit(Rewind(checkpoint_id="t2", restore=RestoreWhat.CODE))
    await run.rec.wait_type("rewound")
    rewound = run.rec.of("rewound")[-1]
    assert [c.path for c in rewound.skipped_conflicts] == ["a.txt"]
    assert (tmp_path / "ws" / "a.txt").read_text() == "the user's own change\n"
    run.submit(Rewind(checkpoint_id="t2", restore=RestoreWhat.CODE, overwrite_conflicts=True))
    await run.rec.wait_type("rewound", 2)
    assert (tmp_path / "ws" / "a.txt").read_text() == "one\n"
    await run.close()


async def test_a_rewind_can_itself_be_undone(tmp_path):
    run, _ = start(tmp_path)
    await turn(run, "write it")
    await turn(run, "edit it")
    run.submit(Rewind(checkpoint_id="t1", restore=RestoreWhat.CODE))
    await run.rec.wait_type("rewound")
    undo = run.rec.of("rewound")[-1].undo_checkpoint_id
    assert not (tmp_path / "ws" / "a.txt").exists()
    run.submit(ListRewindPoints())
    await run.rec.wait_type("rewind_points")
    points = run.rec.of("rewind_points")[-1].points
    assert [p.checkpoint_id for p in points][0] == undo  # newest first
    assert {p.label for p in points if p.turn_id} == {"write it", "edit it"}
    run.submit(Rewind(checkpoint_id=undo, restore=RestoreWhat.CODE))
    await run.rec.wait_type("rewound", 2)
    assert (tmp_path / "ws" / "a.txt").read_text() == "uno\n"
    check_model_view(model_view(run.journal.records))  # code-only: conversation intact
    await run.close()


async def test_rewind_while_a_turn_runs_is_refused(tmp_path):
    run, _ = start(tmp_path)
    run.session.deps.provider.delay = 0.05
    run.submit(UserMessage(text="a long hello"))
    await run.rec.wait_type("turn_started")
    run.submit(Rewind(checkpoint_id="t1"))
    await run.rec.wait_for(
        lambda: any("before rewinding" in n.text for n in run.rec.of("notice"))
    )
    await run.idle()
    assert run.rec.of("rewound") == []
    await run.close()
