"""The command line: its options, read and checked into :class:`Options`.

Bad input (a folder that is not one, a thinking setting that does not parse) is a
:class:`UsageError`, told in one line with exit code 1.
"""

from __future__ import annotations

import argparse
import os
import re
import select
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, NoReturn

from agent_tui.protocol.states import CLAUDE_MODE_NAMES, PermissionMode, mode_choices

PROVIDERS = ("anthropic", "bedrock", "vertex", "scripted", "openai")
CLOUD_PROVIDERS = ("bedrock", "vertex")
# How long print mode waits for a pipe on stdin to say anything (Claude Code's wait).
STDIN_WAIT_S = 3.0


class UsageError(Exception):
    """Bad command-line input: reported in one line, exit code 1."""


class _Parser(argparse.ArgumentParser):
    """argparse's own complaints (an unknown option, a bad choice) are usage errors
    too: one line and exit code 1, as every error of the command line."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (agent-tui --help lists the options)")


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
    add_dirs: list[Path] = field(default_factory=list)  # --add-dir, resolved folders
    thinking: str | None = None  # None: the settings' thinking, else auto
    effort: str | None = None
    settings: Path | None = None  # --settings FILE: applied after the user's and project's
    max_turns: int | None = None  # print mode: the most model requests the run may make
    # --allowedTools / --disallowedTools: permission rules above every settings file
    allowed_tools: list[str] = field(default_factory=list)
    disallowed_tools: list[str] = field(default_factory=list)
    system_prompt: str | None = None  # --system-prompt: instead of the default one
    append_system_prompt: str = ""
    fork_session: bool = False  # --fork-session: --resume / --continue into a new session
    provider_given: bool = False  # --provider was given (else a settings' apiKeyHelper may choose)
    max_budget_usd: float | None = None  # --max-budget-usd: no request past this spend
    # The Agent SDK's (docs/scripts.md, "Agent SDK"): stream-json's shape (None: Claude
    # Code's for the SDK's entrypoint, else ours), its partial messages, who answers
    # permission questions (stdio: the app), MCP servers as JSON or files.
    stream_shape: str | None = None
    permission_word: str | None = None  # --permission-mode as given (Claude Code's words differ)
    include_partial_messages: bool = False
    replay_user_messages: bool = False  # each user message echoed back with its uuid
    permission_prompt_tool: str | None = None
    mcp_config: list[str] = field(default_factory=list)
    trust: bool = False  # --trust: the workspace's own settings apply in full, this run
    # --init / --maintenance: Setup hooks (that trigger) before SessionStart; --init-only:
    # those and SessionStart's, then the run ends
    setup_trigger: str | None = None
    init_only: bool = False
    plugin_dirs: list[Path] = field(default_factory=list)  # --plugin-dir: this run's plugins
    # --setting-sources: which settings files are read (None: all of them)
    setting_sources: frozenset[str] | None = None


def _parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="agent-tui",
        description="A terminal coding agent whose stop button really stops.",
        epilog="Commands: 'agent-tui acp [options]' (Agent Client Protocol over stdio), "
        "'agent-tui sessions' (list saved sessions).",
    )
    p.add_argument("--provider", metavar="NAME", help=f"{', '.join(PROVIDERS)}, a preset "
                   "(openrouter, ollama, lmstudio, deepseek...; docs/providers.md) or a "
                   "\"providers\" entry of your settings; default: bedrock or vertex when "
                   "CLAUDE_CODE_USE_BEDROCK or CLAUDE_CODE_USE_VERTEX is 1, anthropic when "
                   "ANTHROPIC_API_KEY is set or your settings have an apiKeyHelper, else "
                   "scripted (offline)")
    p.add_argument("--model", help="model name, or PROVIDER/MODEL (ollama/qwen3-coder)")
    p.add_argument("--max-budget-usd", metavar="N", default=None,
                   help="spend at most N US dollars in this run: a request past it is not "
                   "sent (default: the settings' maxBudgetUsd)")
    p.add_argument("--cwd", type=Path, default=None, help="the workspace (default: .)")
    p.add_argument("--permission-mode", default=None, metavar="MODE",
                   help=f"{', '.join(PermissionMode)} (Claude Code's "
                   f"{', '.join(CLAUDE_MODE_NAMES)} too); "
                   "default: the settings files' defaultMode, else ask")
    p.add_argument("--theme", default=None, help="default: the settings files' theme, else dark")
    p.add_argument("--settings", default=None, metavar="FILE|JSON",
                   help="a settings file (or its JSON) applied after the user's and the "
                   "project's (trusted like your own: its hooks run)")
    group = p.add_mutually_exclusive_group()
    group.add_argument("-r", "--resume", metavar="SESSION_ID")
    group.add_argument("-c", "--continue", dest="continue_", action="store_true",
                       help="continue the latest session of this workspace")
    p.add_argument("--fork-session", action="store_true",
                   help="with --resume or --continue: go on in a new session that starts "
                   "from the same history (the original is left as it was)")
    p.add_argument("--script", type=Path, help="script file for the scripted provider")
    p.add_argument("-p", "--print", dest="print_mode", action="store_true",
                   help="print mode: run without a screen")
    p.add_argument("prompt", nargs="?", help="the prompt (print mode)")
    p.add_argument("--output-format", choices=("text", "json", "stream-json"), default="text",
                   help="print mode's stdout: the answer (text), one result object at the "
                   "end (json), or every event as a JSON line, then the result (stream-json)")
    p.add_argument("--input-format", choices=("text", "stream-json"), default="text")
    p.add_argument("--max-turns", metavar="N", default=None,
                   help="print mode: make at most N model requests, then stop "
                   "(the result says error_max_turns, exit code 1)")
    p.add_argument("--dangerously-skip-permissions", action="store_true",
                   help="Claude Code's spelling of --permission-mode auto")
    p.add_argument("--verbose", action="store_true",
                   help="taken as Claude Code takes it; print mode already reports every "
                   "tool call (stderr, or stream-json's events)")
    p.add_argument("--system-prompt", metavar="TEXT", default=None,
                   help="the system prompt instead of the default one (memory files such "
                   "as CLAUDE.md and AGENTS.md are still added)")
    p.add_argument("--append-system-prompt", metavar="TEXT", default="",
                   help="text added at the end of the system prompt")
    for flag, dest, what in (("--allowedTools", "allowed_tools", "allowed without asking"),
                             ("--disallowedTools", "disallowed_tools", "always refused")):
        spelled = "--" + "-".join(w.lower() for w in re.findall(r"[a-zA-Z][a-z]*", flag))
        p.add_argument(flag, spelled, dest=dest, nargs="+", action="extend", default=[],
                       metavar="RULES", help=f"permission rules for calls {what}, in "
                       "Claude Code's syntax (\"Bash(git diff:*),Read\"), separated by spaces "
                       "or commas; repeatable; above every settings file")
    p.add_argument("--add-dir", dest="add_dirs", metavar="DIR", action="append", type=Path,
                   default=[], help="a folder the file tools may also read and write, as "
                   "the workspace (permissions, checkpoints and the sandbox cover it); "
                   "repeatable")
    p.add_argument("--plugin-dir", dest="plugin_dirs", metavar="DIR", action="append",
                   type=Path, default=[], help="load the plugin in DIR for this run (as "
                   "Claude Code's --plugin-dir: as if installed and enabled); repeatable")
    p.add_argument("--sandbox", action=argparse.BooleanOptionalAction, default=None,
                   help="run commands under bubblewrap: writes only in the workspace, no "
                   "network (default: the settings' sandbox.enabled)")
    setup = p.add_mutually_exclusive_group()
    setup.add_argument("--init", dest="setup_trigger", action="store_const", const="init",
                       help="run the Setup hooks (trigger init) before the session starts")
    setup.add_argument("--init-only", action="store_true",
                       help="run the Setup (init) and SessionStart hooks, then exit")
    setup.add_argument("--maintenance", dest="setup_trigger", action="store_const",
                       const="maintenance",
                       help="run the Setup hooks (trigger maintenance) before the session starts")
    p.add_argument("--trust", action="store_true",
                   help="trust this folder: its settings' allow rules, env, sandbox and "
                   "defaultMode apply (untrusted, a project's files can only take away); "
                   "for this run only (the TUI's trust dialog remembers its answer)")
    p.add_argument("--thinking", metavar="off|adaptive|BUDGET", default=None,
                   help="extended thinking: off, adaptive, or a budget in tokens (default: "
                   "the settings' thinking, else what the model offers)")
    _sdk_flags(p)
    p.add_argument("--effort", choices=("low", "medium", "high", "xhigh", "max"), default=None,
                   help="output effort, where the model supports it")
    return p


def _sdk_flags(p: argparse.ArgumentParser) -> None:
    """Flags the Claude Agent SDK passes (docs/scripts.md, "Agent SDK"); any other of
    Claude Code's is an unknown option, named in the error."""
    p.add_argument("--stream-shape", choices=("agent-tui", "claude-code"), default=None,
                   help="stream-json's lines: agent-tui's events, or Claude Code's messages "
                   "and control protocol (default: claude-code when CLAUDE_CODE_ENTRYPOINT "
                   "is an Agent SDK's, sdk-py or sdk-ts)")
    p.add_argument("--include-partial-messages", action="store_true",
                   help="stream-json in Claude Code's shape: the model's stream as "
                   "stream_event messages too")
    p.add_argument("--replay-user-messages", action="store_true",
                   help="stream-json in Claude Code's shape: each user message echoed "
                   "back, with the uuid rewind_files takes")
    p.add_argument("--permission-prompt-tool", metavar="stdio", default=None,
                   help="stdio: permission questions go to the app over the control "
                   "protocol (can_use_tool)")
    p.add_argument("--mcp-config", metavar="FILE|JSON", action="append", default=[],
                   help="MCP servers ({\"mcpServers\": {...}}) for this run, a file or JSON; "
                   "repeatable")
    p.add_argument("--system-prompt-file", type=Path, default=None, metavar="FILE",
                   help="--system-prompt, read from FILE")
    p.add_argument("--max-thinking-tokens", metavar="N", default=None,
                   help="--thinking N")
    p.add_argument("--setting-sources", metavar="SOURCES", default=None,
                   help="the settings files to read, comma-separated: user, project, local "
                   "(empty: none; --settings is always read)")


def parse_options(argv: list[str], stdin: IO[str] | None = None) -> Options:
    """``stdin``: print mode's input, read when it is not a terminal (``cat log |
    agent-tui -p "explain"``): what it holds follows the prompt, as in Claude Code."""
    args = _parser().parse_args(argv)
    cwd = (args.cwd or Path.cwd()).expanduser()
    if not cwd.is_dir():
        raise UsageError(f"--cwd {cwd}: not a directory")
    chosen = _checked_provider(args.provider, args.model)
    provider = chosen or _default_provider()
    allowed = _checked_rules("--allowedTools", args.allowed_tools)
    disallowed = _checked_rules("--disallowedTools", args.disallowed_tools)
    if args.input_format == "stream-json" and args.output_format == "json":
        raise UsageError("--input-format stream-json needs --output-format stream-json (its "
                         "last line is the result object --output-format json would write)")
    prompt = args.prompt
    # Input in stream-json is print mode (the Agent SDK passes no -p)
    args.print_mode = args.print_mode or args.input_format == "stream-json" or args.init_only
    _sdk_options(args)
    if args.print_mode and args.input_format == "text" and stdin is not None:
        piped = read_piped(stdin)  # last: a bad option never waits for stdin
        prompt = "\n".join(part for part in (prompt, piped) if part) or None
    if args.print_mode and not prompt and args.input_format != "stream-json" and not args.init_only:
        hint = ("; a prompt right after a rule list is read as rules: put it first, or end "
                "the rules with --") if allowed or disallowed else ""
        raise UsageError(f"-p needs a prompt, as an argument or on stdin (or --input-format "
                         f"stream-json){hint}")
    add_dirs = _folders("--add-dir", args.add_dirs)
    plugin_dirs = _folders("--plugin-dir", args.plugin_dirs)
    if args.fork_session and not (args.resume or args.continue_):
        raise UsageError("--fork-session goes with --resume ID or --continue")
    return Options(
        provider=provider,
        model=args.model,
        cwd=cwd.resolve(),
        permission_mode=_checked_mode(args.permission_mode, args.dangerously_skip_permissions),
        theme=args.theme,
        resume=args.resume,
        continue_=args.continue_,
        script=args.script,
        prompt=prompt,
        print_mode=args.print_mode,
        output_format=args.output_format,
        input_format=args.input_format,
        sandbox=args.sandbox,
        add_dirs=add_dirs,
        thinking=_checked_thinking(args.thinking),
        effort=args.effort,
        settings=_settings_file(args.settings),
        max_turns=_checked_max_turns(args.max_turns, args.print_mode),
        allowed_tools=allowed,
        disallowed_tools=disallowed,
        system_prompt=args.system_prompt,
        append_system_prompt=args.append_system_prompt,
        fork_session=args.fork_session,
        provider_given=chosen is not None,
        max_budget_usd=_checked_budget(args.max_budget_usd),
        stream_shape=args.stream_shape,
        permission_word=args.permission_mode,
        include_partial_messages=args.include_partial_messages,
        replay_user_messages=args.replay_user_messages,
        permission_prompt_tool=args.permission_prompt_tool,
        mcp_config=args.mcp_config,
        trust=args.trust,
        setup_trigger="init" if args.init_only else args.setup_trigger,
        init_only=args.init_only,
        plugin_dirs=plugin_dirs,
        setting_sources=_checked_sources(args.setting_sources),
    )


def _checked_sources(value: str | None) -> frozenset[str] | None:
    if value is None:
        return None
    from agent_tui.settings import SETTING_SOURCES

    given = frozenset(part.strip() for part in value.split(",") if part.strip())
    if unknown := sorted(given - set(SETTING_SOURCES)):
        raise UsageError(f"--setting-sources: {', '.join(unknown)} is no setting source "
                         f"(they are {', '.join(SETTING_SOURCES)})")
    return given


def _folders(flag: str, given: list[Path]) -> list[Path]:
    """The folders a repeatable flag names, resolved; a UsageError for one that is not."""
    found = []
    for folder in given:
        folder = folder.expanduser()
        if not folder.is_dir():
            raise UsageError(f"{flag} {folder}: not a directory")
        found.append(folder.resolve())
    return found


def _sdk_options(args: argparse.Namespace) -> None:
    """The Agent SDK's spellings, checked and turned into ours."""
    if args.permission_prompt_tool not in (None, "stdio"):
        raise UsageError(f"--permission-prompt-tool {args.permission_prompt_tool}: agent-tui "
                         "asks the app over the control protocol (stdio) or no one")
    if args.permission_prompt_tool and args.input_format != "stream-json":
        raise UsageError("--permission-prompt-tool stdio needs --input-format stream-json")
    if args.include_partial_messages and args.output_format != "stream-json":
        raise UsageError("--include-partial-messages needs --output-format stream-json")
    if args.system_prompt_file is not None:
        if args.system_prompt is not None:
            raise UsageError("--system-prompt and --system-prompt-file: give one")
        try:
            args.system_prompt = args.system_prompt_file.expanduser().read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"--system-prompt-file {args.system_prompt_file}: {exc}") from None
    if args.max_thinking_tokens is not None:
        if args.thinking is not None:
            raise UsageError("--thinking and --max-thinking-tokens: give one")
        args.thinking = args.max_thinking_tokens
    if args.thinking == "disabled":  # Claude Code's word
        args.thinking = "off"


def _settings_file(value: str | None) -> Path | None:
    """``--settings``: a file, or its JSON (the Agent SDK's way), kept in a private file
    for this process."""
    if value is None:
        return None
    if not value.lstrip().startswith("{"):
        return Path(value).expanduser().resolve()
    import atexit
    import json
    import tempfile

    try:
        json.loads(value)
    except ValueError as exc:
        raise UsageError(f"--settings: not valid JSON ({exc})") from None
    fd, name = tempfile.mkstemp(prefix="agent-tui-settings-", suffix=".json")  # 0600
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(value)
    atexit.register(lambda: Path(name).unlink(missing_ok=True))
    return Path(name)


def _default_provider() -> str:
    """Claude Code's switches first (a cloud account), then the API key."""
    from agent_tui.providers.cloud_switch import CloudSetupError, chosen_cloud

    try:
        cloud = chosen_cloud()
    except CloudSetupError as exc:
        raise UsageError(str(exc)) from None
    if cloud is not None:
        return str(cloud)
    return "anthropic" if os.environ.get("ANTHROPIC_API_KEY") else "scripted"


def _checked_provider(given: str | None, model: str | None) -> str | None:
    """``--provider``, else the provider ``--model PROVIDER/MODEL`` names (a built-in one
    or a preset; a settings entry's name is seen by the wiring, which reads settings)."""
    from agent_tui.providers.presets import BUILTIN_NAMES, PRESETS

    if given is not None:
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", given):
            raise UsageError(f"--provider {given}: not a provider name")
        return given
    head, sep, rest = (model or "").partition("/")
    if sep and rest and (head in BUILTIN_NAMES or head in PRESETS):
        return head
    return None


def _checked_budget(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        budget = float(value)
    except ValueError:
        budget = 0.0
    if not budget > 0 or budget != budget or budget == float("inf"):
        raise UsageError(f"--max-budget-usd {value}: give an amount in US dollars above 0")
    return budget


def _checked_mode(value: str | None, skip_permissions: bool = False) -> str | None:
    """Ours, from either spelling (and from ``--dangerously-skip-permissions``)."""
    if skip_permissions:
        if value is not None and _checked_mode(value) != PermissionMode.AUTO:
            raise UsageError(f"--dangerously-skip-permissions is --permission-mode auto: "
                             f"it cannot go with --permission-mode {value}")
        return PermissionMode.AUTO.value
    if value is None:
        return None
    try:
        return PermissionMode.parse(value).value
    except ValueError:
        raise UsageError(f"--permission-mode {value}: not a mode (use one of "
                         f"{mode_choices()})") from None


def read_piped(stdin: IO[str], wait: float = STDIN_WAIT_S) -> str:
    """What a pipe or a file on stdin holds, to its end; "" for a terminal, and for a
    pipe that says nothing for ``wait`` seconds (a parent's idle pipe: said on stderr)."""
    try:
        if stdin.isatty():
            return ""
        ready, _, _ = select.select([stdin.fileno()], [], [], wait)
    except (OSError, ValueError):
        return ""  # no stdin at all (closed), or not a file
    if not ready:
        print(f"agent-tui: warning: nothing on stdin after {wait:g} s, going on without it "
              "(give < /dev/null to skip the wait)", file=sys.stderr)
        return ""
    try:
        return stdin.read().rstrip("\n")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read stdin: {exc}") from None


def split_rules(text: str) -> list[str]:
    """Rules as Claude Code's command line takes them: separated by spaces or commas,
    but not inside parentheses (``Bash(git log:*) Read``, ``"Bash(npm run test:*),Read"``)."""
    rules: list[str] = []
    current: list[str] = []
    depth = 0
    for char in text:
        if depth == 0 and (char == "," or char.isspace()):
            if current:
                rules.append("".join(current))
                current = []
            continue
        depth += {"(": 1, ")": -1}.get(char, 0)
        depth = max(depth, 0)
        current.append(char)
    if current:
        rules.append("".join(current))
    return rules


def _checked_rules(flag: str, values: list[str]) -> list[str]:
    rules = [rule for value in values for rule in split_rules(value)]
    if not rules:
        return []
    from agent_tui.permissions import InvalidRule, Rule

    for rule in rules:
        try:
            Rule.parse(rule)
        except InvalidRule as exc:
            raise UsageError(f"{flag}: {exc} (if that is the prompt: put it first, or end "
                             "the rules with --)") from None
    return rules


def _checked_max_turns(value: str | None, print_mode: bool) -> int | None:
    if value is None:
        return None
    if not print_mode:
        raise UsageError("--max-turns is for print mode (-p)")
    try:
        turns = int(value)
    except ValueError:
        turns = 0
    if turns < 1:
        raise UsageError(f"--max-turns {value}: give a whole number of model requests, 1 or more")
    return turns


def _checked_thinking(value: str | None) -> str | None:
    if value is None:
        return None
    from agent_tui.core.usage.thinking import ThinkingError, parse_thinking

    try:
        parse_thinking(value)
    except ThinkingError as exc:
        raise UsageError(f"--{exc}") from None
    return value
