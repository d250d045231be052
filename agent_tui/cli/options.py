"""The command line: its options, read and checked into :class:`Options`.

Bad input (a folder that is not one, a thinking setting that does not parse) is a
:class:`UsageError`, told in one line with exit code 1.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass
from pathlib import Path

PROVIDERS = ("anthropic", "scripted")
MODES = ("ask", "accept-edits", "auto")


class UsageError(Exception):
    """Bad command-line input: reported in one line, exit code 1."""


@dataclass
class Options:
    provider: str
    model: str | None
    cwd: Path
    permission_mode: str | None  # None: the settings' defaultMode, else "ask"
    theme: str | None  # None: the settings' theme, else "dark"
    resume: str | None
    continue_: bool
    script: Path | None
    prompt: str | None
    print_mode: bool
    output_format: str
    input_format: str
    sandbox: bool | None = None  # None: the settings' sandbox.enabled
    thinking: str | None = None  # None: the settings' thinking, else auto
    effort: str | None = None
    settings: Path | None = None  # --settings FILE: applied after the user's and project's
    fork_session: bool = False  # --fork-session: --resume / --continue into a new session


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="agent-tui",
        description="A terminal coding agent whose stop button really stops.",
        epilog="Commands: 'agent-tui acp [options]' (Agent Client Protocol over stdio), "
        "'agent-tui sessions' (list saved sessions).",
    )
    p.add_argument("--provider", choices=PROVIDERS, help="default: anthropic when "
                   "ANTHROPIC_API_KEY is set, else scripted (offline)")
    p.add_argument("--model", help="model name")
    p.add_argument("--cwd", type=Path, default=None, help="the workspace (default: .)")
    p.add_argument("--permission-mode", choices=MODES, default=None,
                   help="default: the settings files' defaultMode, else ask")
    p.add_argument("--theme", default=None, help="default: the settings files' theme, else dark")
    p.add_argument("--settings", type=Path, default=None, metavar="FILE",
                   help="a settings file applied after the user's and the project's "
                   "(trusted like your own: its hooks run)")
    group = p.add_mutually_exclusive_group()
    group.add_argument("--resume", metavar="SESSION_ID")
    group.add_argument("--continue", dest="continue_", action="store_true",
                       help="continue the latest session of this workspace")
    p.add_argument("--fork-session", action="store_true",
                   help="with --resume or --continue: go on in a new session that starts "
                   "from the same history (the original is left as it was)")
    p.add_argument("--script", type=Path, help="script file for the scripted provider")
    p.add_argument("-p", "--print", dest="print_mode", action="store_true",
                   help="print mode: run without a screen")
    p.add_argument("prompt", nargs="?", help="the prompt (print mode)")
    p.add_argument("--output-format", choices=("text", "stream-json"), default="text")
    p.add_argument("--input-format", choices=("text", "stream-json"), default="text")
    p.add_argument("--sandbox", action=argparse.BooleanOptionalAction, default=None,
                   help="run commands under bubblewrap: writes only in the workspace, no "
                   "network (default: the settings' sandbox.enabled)")
    p.add_argument("--thinking", metavar="off|adaptive|BUDGET", default=None,
                   help="extended thinking: off, adaptive, or a budget in tokens (default: "
                   "the settings' thinking, else what the model offers)")
    p.add_argument("--effort", choices=("low", "medium", "high", "xhigh", "max"), default=None,
                   help="output effort, where the model supports it")
    return p


def parse_options(argv: list[str]) -> Options:
    args = _parser().parse_args(argv)
    cwd = (args.cwd or Path.cwd()).expanduser()
    if not cwd.is_dir():
        raise UsageError(f"--cwd {cwd}: not a directory")
    provider = args.provider or ("anthropic" if os.environ.get("ANTHROPIC_API_KEY") else "scripted")
    if args.print_mode and not args.prompt and args.input_format != "stream-json":
        raise UsageError("-p needs a prompt (or --input-format stream-json)")
    if args.fork_session and not (args.resume or args.continue_):
        raise UsageError("--fork-session goes with --resume ID or --continue")
    return Options(
        provider=provider,
        model=args.model,
        cwd=cwd.resolve(),
        permission_mode=args.permission_mode,
        theme=args.theme,
        resume=args.resume,
        continue_=args.continue_,
        script=args.script,
        prompt=args.prompt,
        print_mode=args.print_mode,
        output_format=args.output_format,
        input_format=args.input_format,
        sandbox=args.sandbox,
        thinking=_checked_thinking(args.thinking),
        effort=args.effort,
        settings=args.settings.expanduser().resolve() if args.settings else None,
        fork_session=args.fork_session,
    )


def _checked_thinking(value: str | None) -> str | None:
    if value is None:
        return None
    from agent_tui.core.thinking import ThinkingError, parse_thinking

    try:
        parse_thinking(value)
    except ThinkingError as exc:
        raise UsageError(f"--{exc}") from None
    return value
