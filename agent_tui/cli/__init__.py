"""Entry points: the TUI, print mode, ACP, the list of saved sessions and MCP logins.

``main`` reads the command line (:mod:`.options`), has :mod:`.wiring` build the
session it asks for, and starts the chosen front end. Imports stay lazy: the TUI's
first frame must not wait for the core.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any, NoReturn

from agent_tui.cli.options import UsageError, parse_options
from agent_tui.cli.wiring import Wiring
from agent_tui.paths import private_dir, state_home

#: Seconds the TUI waits for you after an answer before the Notification hooks say so
#: (Claude Code's idle notification: 60 s).
IDLE_NOTIFY_S = 60.0


def run() -> NoReturn:
    """The ``agent-tui`` command: :func:`main`, then out without freeing the heap
    (:mod:`.process_exit`)."""
    from agent_tui.cli.process_exit import leave

    leave(main())


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    from agent_tui.process_guard import keep_environ_private

    keep_environ_private()  # /proc/<agent>/environ holds the key: not for commands
    from agent_tui.tools import know_the_tools

    know_the_tools()
    try:
        if argv[:1] == ["sessions"]:
            return _sessions()
        if argv[:1] == ["mcp"]:
            from agent_tui.cli.mcp_command import mcp_main

            return mcp_main(argv[1:])
        if argv[:1] in (["plugin"], ["plugins"]):
            from agent_tui.cli.plugin_command import plugin_main

            return plugin_main(argv[1:])
        if argv[:1] == ["acp"]:
            opts = parse_options(argv[1:])
            from agent_tui.acp.server import run_acp
            from agent_tui.runtime.process import kill_all_runs

            return run_acp(Wiring(opts, interactive=True), on_hard_exit=kill_all_runs)
        opts = parse_options(argv, stdin=sys.stdin)
        if opts.print_mode:
            from agent_tui.cli.sdk_entry import claude_shaped, run_claude_shaped

            if claude_shaped(opts):  # the Agent SDK's protocol (docs/scripts.md)
                return run_claude_shaped(opts)
            from agent_tui.cli.start_up import PausedCollection

            start_up = PausedCollection()  # until the session is made
            try:
                from agent_tui.headless import run_print
                from agent_tui.runtime.process import kill_all_runs

                wiring = Wiring(opts, interactive=False)
                wiring.containment_for(opts.cwd)  # a sandbox that cannot run stops us here
                return asyncio.run(run_print(
                    start_up.then(wiring.make_session), prompt=opts.prompt,
                    output_format=opts.output_format, input_format=opts.input_format,
                    on_hard_exit=kill_all_runs, init_only=opts.init_only,
                ))
            finally:
                start_up.done()
        from agent_tui.ui.app.run import run_tui

        wiring = Wiring(opts, interactive=True)
        wiring.idle_notify_s = IDLE_NOTIFY_S  # Notification idle_prompt, as Claude Code's
        # After Esc the prompt is back at once: a call still stopping 10 ms on (most end
        # at TERM within a few) goes on stopping after the turn, shown so in place.
        wiring.stop_settle_s = 0.01
        if opts.sandbox:  # one asked for that cannot run stops us before the first frame
            wiring.containment_for(opts.cwd)
        theme = opts.theme or _settings_theme(opts.cwd, opts.settings) or "dark"
        from agent_tui.runtime.hangup import Hangup

        return run_tui(wiring.make_session, theme=theme, welcome=wiring.chosen_id is None,
                       sessions=wiring, workspace=opts.cwd, signals=Hangup(_kill_all_runs),
                       status_line=lambda ws: _status_line(
                           ws, wiring.trust_for(ws).trusted, wiring.settings_for(ws).user_env),
                       trust=lambda: _trust_question(wiring, opts.cwd))
    except UsageError as exc:
        print(f"agent-tui: {exc}", file=sys.stderr)
        return 1


def _trust_question(wiring: Wiring, workspace: Path) -> Any:
    """The TUI's trust dialog for ``workspace``, or None when it needs no answer (run
    after the first frame: deciding imports the settings package)."""
    from agent_tui.ui.screens.trust import TrustQuestion

    trust = wiring.trust_for(workspace)
    if not trust.needs_answer:
        return None
    return TrustQuestion(workspace=trust.workspace, found=[p.name for p in trust.project],
                         answer=lambda yes: wiring.answer_trust(workspace, yes))


def _kill_all_runs() -> None:
    """The process layer's last resort, imported only when it is needed (not before the
    TUI's first frame)."""
    from agent_tui.runtime.process import kill_all_runs

    kill_all_runs()


def _status_line(workspace: Path, trusted: bool, env: dict[str, str]) -> tuple[object, list[str]]:
    """The statusLine command for the TUI (hooks/status_line.py), made once the session
    exists (after the trust dialog): its import must not delay the first frame. ``env``:
    the user's own settings' env, as hooks get it."""
    from agent_tui.hooks.status_line import status_line_for

    return status_line_for(workspace, trusted=trusted, env=env)


def _settings_theme(workspace: Path, extra: Path | None = None) -> str | None:
    """The settings files' theme, read before the first frame without the settings
    loader (and pydantic): the full load on the core's thread reports any problem."""
    import json

    from agent_tui.paths import settings_files
    from agent_tui.config_file import read_config_text

    theme = None
    # user, then project, then --settings: the last one wins
    for path in [*settings_files(workspace), *([extra] if extra else [])]:
        try:
            value = json.loads(read_config_text(path)).get("theme")
        except (OSError, ValueError, AttributeError, RecursionError):
            continue
        if isinstance(value, str):
            theme = value
    return theme


def _sessions() -> int:
    from agent_tui.core.journal.store import SessionStore, describe

    store = SessionStore(private_dir(state_home()))
    infos = store.list()
    if not infos:
        print("no saved sessions")
    try:
        for info in infos:
            print(describe(info))
    except BrokenPipeError:  # e.g. piped into head
        sys.stderr.close()
    return 0
