"""End to end in a real terminal: the ``agent-tui`` binary in tmux, talking to the fake
Anthropic API over HTTP, driven with ``tmux send-keys`` and read with
``tmux capture-pane``. Each test has its own tmux server (``tmux -L``) and kills it
at the end. Every wait polls the screen with a generous timeout; no sleep is an
assertion."""

from __future__ import annotations

import random
import shlex
import uuid


from tests.fake_api import FakeAnthropicServer, Reply
from tests.tmux_agent import needs_tmux, processes_with, wait_for_condition

pytestmark = needs_tmux


def test_a_single_esc_stops_a_real_process_tree(agent, fake_api: FakeAnthropicServer) -> None:
    tmux, _ = agent
    marker = f"E2E_MARK_{uuid.uuid4().hex[:10]}"
    seconds = str(random.randint(100_000, 999_999))  # a sleep no other process runs
    command = f"sleep {seconds} & sleep {seconds}; : {marker}"
    fake_api.enqueue(Reply.tool_use("bash", {"command": command}, text_before="Running it."))
    fake_api.enqueue(Reply.text("Stopped, as asked."))

    tmux.type("start the long job")
    tmux.keys("Enter")
    tmux.wait_for("▶ running")
    wait_for_condition(lambda: len(processes_with(seconds)) >= 2, "both sleeps started")
    assert processes_with(marker), "the bash process carries the marker"

    tmux.keys("Escape")  # one Esc, alone: it must not wait for more bytes
    tmux.wait_for("turn cancelled")
    # the call's end is shown in place: at once, or once its tree is gone (the turn does not
    # wait more than 10 ms for it)
    tmux.wait_for("cancelled while running")
    wait_for_condition(lambda: not processes_with(marker) and not processes_with(seconds),
                "no process of the tree left", timeout=5)
    assert len(fake_api.requests) == 1  # nothing was sent to the model after the interrupt


def test_typing_while_a_tool_runs_is_queued_then_applied(agent, fake_api: FakeAnthropicServer) -> None:
    tmux, workspace = agent
    gate = workspace / "gate"
    command = f"while [ ! -e {shlex.quote(str(gate))} ]; do sleep 0.05; done; echo gate open"
    fake_api.enqueue(Reply.tool_use("bash", {"command": command}, text_before="Waiting for the gate."))
    fake_api.enqueue(Reply.text("Noted: I will check the logs too."))

    tmux.type("wait for the gate")
    tmux.keys("Enter")
    tmux.wait_for("▶ running")
    tmux.type("also check the logs")
    tmux.keys("Enter")
    tmux.wait_for(lambda s: any("queued" in line and "also check the logs" in line for line in s.splitlines()))

    gate.touch()  # the command ends by itself; the steer rides with its result
    screen = tmux.wait_for(
        lambda s: any("applied" in line and "also check the logs" in line for line in s.splitlines())
    )
    tmux.wait_for("Noted: I will check the logs too.")
    assert fake_api.wait_for_requests(2, timeout=5)
    second = str(fake_api.requests[1]["messages"][-1])
    assert "gate open" in second and "also check the logs" in second
    assert "queued messages" in screen


def test_markup_and_escape_sequences_in_tool_output_stay_literal(agent, fake_api: FakeAnthropicServer) -> None:
    tmux, _ = agent
    title_before = tmux.display("#{pane_title}")
    # What the output says differs from the command's text ($((40+2)) -> 42), so the
    # screen shows the output itself, not the command line.
    command = (
        "printf '\\033]0;PWNED_TITLE\\007'; printf '\\033]2;PWNED_TITLE2\\033\\\\'; "
        "printf '\\033[2J\\033[H'; printf '%s\\n' \"[bold red]x$((40+2))[/]\""
    )
    fake_api.enqueue(Reply.tool_use("bash", {"command": command}, text_before="Printing."))
    fake_api.enqueue(Reply.text("Printed it."))

    tmux.type("print something odd")
    tmux.keys("Enter")
    screen = tmux.wait_for("Printed it.")
    screen = tmux.wait_for("[bold red]x42[/]")
    assert "✓ succeeded" in screen
    assert "PWNED" not in tmux.display("#{pane_title}")
    assert tmux.display("#{pane_title}") == title_before
    # The clear-screen did not wipe what the app drew: the welcome line is still there.
    assert "Type a request and press Enter" in screen
    # Ctrl+O opens the output: still literal there.
    tmux.keys("C-o")
    tmux.wait_for(lambda s: s.count("[bold red]x42[/]") >= 2)


def test_slash_opens_the_menu_a_command_is_picked_and_the_next_request_carries_its_prompt(
    agent, fake_api: FakeAnthropicServer,
) -> None:
    tmux, workspace = agent
    commands = workspace / ".agent-tui" / "commands"
    commands.mkdir(parents=True)
    (commands / "review.md").write_text(
        "---\ndescription: Review a file and list its bugs\n---\nReview $ARGUMENTS and list the bugs.\n")
    fake_api.enqueue(Reply.text("Two bugs found."))

    tmux.type("/")
    tmux.wait_for("/compact")  # the menu
    tmux.type("rev")
    # Filtered: the custom command, with its description, and no other.
    tmux.wait_for(lambda s: "Review a file and list its bugs" in s and "/compact" not in s)
    tmux.keys("Enter")  # completes: the command takes arguments
    tmux.wait_for(lambda s: any(line.strip("│ ").startswith("/review") for line in s.splitlines()))
    tmux.type("parser.py")
    tmux.keys("Enter")
    tmux.wait_for("Two bugs found.")
    assert fake_api.wait_for_requests(1, timeout=5)
    sent = str(fake_api.requests[0]["messages"][-1])
    assert "Review parser.py and list the bugs." in sent
    assert "/review" not in sent

    tmux.type("/cost")  # a built-in command: shown here, never sent to the model
    tmux.keys("Enter")
    tmux.wait_for("esc closes this page")  # the /cost page
    tmux.keys("Escape")
    tmux.wait_for(lambda s: "esc closes this page" not in s)
    assert len(fake_api.requests) == 1
