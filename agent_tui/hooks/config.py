"""The ``hooks`` key of settings files, in Claude Code's shape, parsed entry by entry::

    {"hooks": {"PreToolUse": [
        {"matcher": "bash|mcp__.*",
         "hooks": [{"type": "command", "command": "./check.sh", "timeout": 30,
                    "onFailure": "block"}]}]}}

An event maps to a list of groups; a group has a ``matcher`` (``matchers.py``) and
its ``hooks``, each a command (``type`` ``command``) or an HTTP hook (``type``
``http``: ``url``, ``headers``, ``allowedEnvVars``; ``http_hook.py``) or a prompt
hook (``type`` ``prompt``: ``prompt``, ``model``; ``prompt_hook.py``); ``timeout`` in
seconds, default 60; ``onFailure`` ``block`` or ``continue``; ``statusMessage``, ``once`` and
``shell: "bash"`` are accepted). ``if`` is Claude Code's filter in permission-rule
syntax (``"if": "Bash(git push:*)"``): on a tool event the hook runs only for calls
the rule matches, read as a deny rule is (any part of a command, wrappers seen
through); an ``if`` that does not parse, or on an event without a tool, is warned
about and the hook runs for every call its matcher matches (a guard is never
dropped for a field it carries). ``async`` and ``asyncRewake`` are accepted and not
acted on: the hook runs before things go on, and a warning says so. A malformed event, group or hook is reported with its file, line and
column and skipped alone: the rest still apply. A matcher listing a name no tool
(or trigger) has is warned about the same way, and kept. A key agent-tui does not know
(a typo such as ``tiemout``) is named and ignored: the hook still runs. Hooks of every
file run, a project's too, trusted or not, in every mode: guards always run.
"""

# Annotations are objects, not strings: pydantic would compile each field's string when
# the class is made.
import difflib
import json
from collections.abc import Sequence
from urllib.parse import urlsplit
from enum import StrEnum
from pathlib import Path
from typing import Any

from pydantic import Field

from agent_tui.protocol.model_base import DeferredModel
from agent_tui.plugins import plugin_hooks
from agent_tui.permissions.rules import InvalidRule, Rule
from agent_tui.protocol.states import HookEvent
from agent_tui.settings import LoadedSettings
from agent_tui.settings.problems import SettingsProblem, json_type
from agent_tui.settings.schema import HooksSource
from agent_tui.hooks.events import Subject, event_facts
from agent_tui.hooks.matchers import Matcher

DEFAULT_TIMEOUT_S = 60.0

#: Claude Code events agent-tui does not run, and why: a file that configures one is
#: told so by name (never "unknown", never dropped without a word).
OTHER_CLAUDE_EVENTS = {
    "TeammateIdle": "agent-tui has no agent teams",
    "WorktreeCreate": "agent-tui creates no worktrees of its own",
    "WorktreeRemove": "agent-tui creates no worktrees of its own",
    "CwdChanged": "the session's working folder never changes",
    "FileChanged": "agent-tui watches no files for hooks",
    "MessageDisplay": "agent-tui does not let hooks rewrite what is shown",
}
_GROUP_KEYS = ("matcher", "hooks")
_HOOK_KEYS = ("type", "command", "timeout", "onFailure", "statusMessage", "if", "async",
              "asyncRewake", "shell", "once", "args")
_PROMPT_KEYS = ("type", "prompt", "model", "timeout", "onFailure", "statusMessage", "if", "once")
_HTTP_KEYS = ("type", "url", "headers", "allowedEnvVars", "timeout", "onFailure",
              "statusMessage", "if", "async", "once")
_MCP_KEYS = ("type", "server", "tool", "input", "timeout", "onFailure", "statusMessage", "if",
             "once")
_KEYS_OF_KIND: dict[Any, tuple[str, ...]] = {
    "command": _HOOK_KEYS, "http": _HTTP_KEYS, "prompt": _PROMPT_KEYS, "mcp_tool": _MCP_KEYS,
}
#: Claude Code's hook fields agent-tui accepts without acting on them, and what that
#: means: said once per hook, never a reason to drop it (a guard must not be lost).
_NOT_ACTED_ON = {
    "async": "`async` is not supported: the hook runs before things go on",
    "asyncRewake": "`asyncRewake` is not supported: the hook runs before things go on",
}


class OnFailure(StrEnum):
    """What a hook that fails to answer means for what it gates."""

    BLOCK = "block"  # fail closed
    CONTINUE = "continue"  # as if there were no hook


class HookKind(StrEnum):
    COMMAND = "command"  # a bash command line
    HTTP = "http"  # a POST of the input JSON to a URL (``http_hook.py``)
    PROMPT = "prompt"  # the model judges the event (``prompt_hook.py``)
    MCP_TOOL = "mcp_tool"  # a configured MCP server's tool is called (``mcp_hook.py``)


class HookCommand(DeferredModel):
    """One configured hook: a command, or (``kind`` http) a URL to POST to."""

    event: HookEvent
    matcher: Matcher = Field(default_factory=Matcher)
    command: str  # the command line; an HTTP hook's URL; a prompt hook's prompt
    kind: HookKind = HookKind.COMMAND
    headers: dict[str, str] = Field(default_factory=dict)  # HTTP: sent with the POST
    allowed_env: frozenset[str] = frozenset()  # HTTP: variables its headers may name
    model: str | None = None  # prompt: the model to ask (None: the session's)
    # mcp_tool: the server, its tool, and the arguments (``${path}`` of the input JSON)
    mcp_server: str = ""
    mcp_tool: str = ""
    mcp_input: dict[str, Any] = Field(default_factory=dict)
    timeout_s: float = DEFAULT_TIMEOUT_S
    # None: a timeout or a failed start blocks, a crash (exit code other than 0 and 2)
    # does not, as in Claude Code; set, every failure is treated so.
    on_failure: OnFailure | None = None
    file: Path
    line: int | None = None
    project: bool = False
    condition: Rule | None = None  # ``if``: the calls it runs for (tool events only)
    env: dict[str, str] = Field(default_factory=dict)  # a plugin's: CLAUDE_PLUGIN_OPTION_*

    @property
    def source(self) -> str:
        return f"{self.file}:{self.line}" if self.line is not None else str(self.file)


class HooksConfig(DeferredModel):
    commands: list[HookCommand] = Field(default_factory=list)  # in force
    problems: list[SettingsProblem] = Field(default_factory=list)


def load_hooks(settings: LoadedSettings) -> HooksConfig:
    """Every file's hooks, a project's too (a guard runs whether or not the project is
    trusted: it can only take away)."""
    config = HooksConfig()
    for source in settings.hooks:
        commands, problems = parse_hooks(source)
        config.problems.extend(problems)
        config.commands.extend(commands)
    for part in plugin_hooks():  # the user's enabled plugins' hooks/hooks.json: the user's own
        commands, problems = parse_hooks(HooksSource(file=part.file, project=False, value=part.value))
        config.commands.extend(c.model_copy(update={"env": part.env}) for c in commands)
        config.problems.extend(problems)
    return config


class _Skip(Exception):
    def __init__(self, loc: tuple[Any, ...], message: str) -> None:
        super().__init__(message)
        self.loc = loc
        self.message = message


def parse_hooks(source: HooksSource) -> tuple[list[HookCommand], list[SettingsProblem]]:
    """One file's ``hooks`` value: the commands that parse, and a problem for each
    entry that does not (skipped)."""
    commands: list[HookCommand] = []
    problems: list[SettingsProblem] = []

    def problem(loc: tuple[Any, ...], message: str, *, skipped: bool = True) -> None:
        line, column = _where(source, loc)
        problems.append(SettingsProblem(
            file=source.file, line=line, column=column, only_this=True,
            message=f"{_dotted(loc)}: {message}" + (" (skipped)" if skipped else ""),
        ))

    value = source.value
    if not isinstance(value, dict):
        problem((), f"expected an object of events {{...}}, got {json_type(value)}")
        return commands, problems
    for name, groups in value.items():
        try:
            event = _event(name)
            if not isinstance(groups, list):
                raise _Skip((name,), f"expected a list of matcher groups, got {json_type(groups)}")
        except _Skip as skip:
            problem(skip.loc, skip.message)
            continue
        for g, group in enumerate(groups):
            try:
                matcher, hooks, unknown_keys = _group(name, g, group)
            except _Skip as skip:
                problem(skip.loc, skip.message)
                continue
            for unknown_key in unknown_keys:
                problem(unknown_key.loc, unknown_key.message, skipped=False)
            unknown = _unknown_subjects(event, matcher)
            if unknown:
                problem((name, g, "matcher"), unknown, skipped=False)
            for h, hook in enumerate(hooks):
                loc = (name, g, "hooks", h)
                known = _KEYS_OF_KIND.get(hook.get("type")) if isinstance(hook, dict) else None
                if known is not None:  # named and ignored: the hook still runs
                    for unknown_key in _unknown_keys(hook, known, loc):
                        problem(unknown_key.loc, unknown_key.message, skipped=False)
                try:
                    commands.append(_command(event, matcher, hook, loc, source))
                except _Skip as skip:
                    problem(skip.loc, skip.message)
                    continue
                said_if = _condition_problem(event, hook)
                if said_if:
                    problem(loc + ("if",), said_if, skipped=False)
                for key, said in _NOT_ACTED_ON.items():
                    if key in hook and hook[key] not in (False, None):
                        problem(loc + (key,), said, skipped=False)
    return commands, problems


def is_tool_event(event: HookEvent) -> bool:
    """The event's matcher is tried against a tool's name (``if`` takes a rule there)."""
    return event_facts(event).subject is Subject.TOOL


def _condition(event: HookEvent, hook: dict[str, Any]) -> Rule | None:
    text = hook.get("if")
    if not is_tool_event(event) or not isinstance(text, str) or not text.strip():
        return None
    try:
        return Rule.parse(text)
    except InvalidRule:
        return None


def _condition_problem(event: HookEvent, hook: dict[str, Any]) -> str:
    """A warning for an ``if`` the hook cannot honour ("" when it is fine or absent)."""
    if "if" not in hook or hook["if"] in (None, ""):
        return ""
    text = hook["if"]
    if not isinstance(text, str):
        return f"`if` must be a permission rule as a string, got {json_type(text)}; the hook runs for every call"
    if not is_tool_event(event):
        return f"`if` applies to tool events only; this {event} hook runs every time"
    try:
        Rule.parse(text)
    except InvalidRule as exc:
        return f"{exc}; the hook runs for every call its matcher matches"
    return ""


def _unknown_subjects(event: HookEvent, matcher: Matcher) -> str:
    """A warning for a matcher that lists names no subject of its event has ("" if none)."""
    if is_tool_event(event):
        names = matcher.unknown_names()
        if names:
            return (f"{', '.join(names)}: no tool has this name (Claude Code's names, such as "
                    "Bash, Read, Edit|Write, mcp__server__tool, or agent-tui's own); the "
                    "matcher never matches it")
        return ""
    facts = event_facts(event)
    if facts.subject is not Subject.WORD:
        return ""
    known = facts.words
    names = sorted(n for n in matcher.names() if n not in known)
    if not names:
        return ""
    return (f"{', '.join(names)}: not a {event} matcher (known: {', '.join(sorted(known))}); "
            "the matcher never matches it")


def _event(name: str) -> HookEvent:
    try:
        return HookEvent(name)
    except ValueError:
        pass
    if name in OTHER_CLAUDE_EVENTS:
        raise _Skip((name,), f"{name} hooks are not supported by agent-tui "
                    f"({OTHER_CLAUDE_EVENTS[name]}); they never run")
    known = [e.value for e in HookEvent]
    close = difflib.get_close_matches(name, known, n=1)
    hint = f' (did you mean "{close[0]}"?)' if close else ""
    raise _Skip((name,), f"unknown hook event{hint}; known events: {', '.join(known)}")


def _group(name: str, g: int, group: Any) -> tuple[Matcher, list[Any], list[_Skip]]:
    loc = (name, g)
    if not isinstance(group, dict):
        raise _Skip(loc, f'expected {{"matcher": ..., "hooks": [...]}}, got {json_type(group)}')
    unknown = _unknown_keys(group, _GROUP_KEYS, loc)
    text = group.get("matcher", "")
    if not isinstance(text, str):
        raise _Skip(loc + ("matcher",), f"expected a string, got {json_type(text)}")
    try:
        matcher = Matcher.parse(text)
    except ValueError as exc:
        raise _Skip(loc + ("matcher",), str(exc)) from None
    hooks = group.get("hooks")
    if not isinstance(hooks, list):
        where = loc + ("hooks",) if "hooks" in group else loc
        raise _Skip(where, f"expected a list of hooks, got {json_type(hooks)}")
    return matcher, hooks, unknown


def _command(
    event: HookEvent, matcher: Matcher, hook: Any, loc: tuple[Any, ...], source: HooksSource
) -> HookCommand:
    if not isinstance(hook, dict):
        raise _Skip(loc, f'expected {{"type": "command", "command": ...}}, got {json_type(hook)}')
    kind = hook.get("type")
    if kind not in ("command", "http", "prompt", "mcp_tool"):
        shown = json.dumps(kind) if kind is not None else "missing"
        raise _Skip(loc + ("type",) if "type" in hook else loc, f'type is {shown}: agent-tui '
                    'runs "command", "http", "prompt" and "mcp_tool" hooks')
    timeout = hook.get("timeout", DEFAULT_TIMEOUT_S)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
        raise _Skip(loc + ("timeout",), "timeout must be a number of seconds above 0")
    failure = hook.get("onFailure")
    try:
        on_failure = OnFailure(failure) if failure is not None else None
    except ValueError:
        raise _Skip(loc + ("onFailure",), 'onFailure must be "block" or "continue"') from None
    message = hook.get("statusMessage", "")
    if not isinstance(message, str):
        raise _Skip(loc + ("statusMessage",), "statusMessage must be a string")
    line, _ = _where(source, loc)
    common: dict[str, Any] = dict(
        event=event, matcher=matcher, timeout_s=float(min(timeout, 86400)),
        on_failure=on_failure, file=source.file, line=line, project=source.project,
        condition=_condition(event, hook),
    )
    if kind == "prompt":
        text, model = hook.get("prompt"), hook.get("model")
        if not isinstance(text, str) or not text.strip():
            raise _Skip(loc + ("prompt",) if "prompt" in hook else loc,
                        "prompt must be a non-empty string")
        if model is not None and (not isinstance(model, str) or not model.strip()):
            raise _Skip(loc + ("model",), "model must be a model name")
        return HookCommand(command=text, kind=HookKind.PROMPT, model=model, **common)
    if kind == "mcp_tool":
        return _mcp_tool(hook, loc, source, common)
    if kind == "http":
        return HookCommand(command=_url(hook, loc), kind=HookKind.HTTP,
                           headers=_headers(hook, loc), allowed_env=_allowed_env(hook, loc),
                           **common)
    if "args" in hook:
        raise _Skip(loc + ("args",), "exec form (`args`) is not supported; give the whole "
                    "command line in `command`")
    if hook.get("shell", "bash") != "bash":
        raise _Skip(loc + ("shell",), 'hooks run with bash here; "shell" must be "bash"')
    command = hook.get("command")
    if not isinstance(command, str) or not command.strip() or "\0" in command:
        raise _Skip(loc + ("command",) if "command" in hook else loc,
                    "command must be a non-empty string")
    return HookCommand(command=command, **common)


def _mcp_tool(hook: dict[str, Any], loc: tuple[Any, ...], source: HooksSource,
              common: dict[str, Any]) -> HookCommand:
    if source.project:  # stricter than Claude Code: a repository's guard is a command
        raise _Skip(loc, "a project's settings may not call your MCP servers from a hook")
    server, tool, given = hook.get("server"), hook.get("tool"), hook.get("input", {})
    for key, value in (("server", server), ("tool", tool)):
        if not isinstance(value, str) or not value.strip():
            raise _Skip(loc + (key,) if key in hook else loc, f"{key} must be a non-empty string")
    if not isinstance(given, dict):
        raise _Skip(loc + ("input",), f"input must be an object, got {json_type(given)}")
    assert isinstance(server, str) and isinstance(tool, str)
    return HookCommand(command=f"{server}/{tool}", kind=HookKind.MCP_TOOL, mcp_server=server,
                       mcp_tool=tool, mcp_input=given, **common)


def _url(hook: dict[str, Any], loc: tuple[Any, ...]) -> str:
    url = hook.get("url")
    parts = urlsplit(url) if isinstance(url, str) else None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        raise _Skip(loc + ("url",) if "url" in hook else loc,
                    "url must be an http:// or https:// address")
    assert isinstance(url, str)
    return url


def _headers(hook: dict[str, Any], loc: tuple[Any, ...]) -> dict[str, str]:
    headers = hook.get("headers", {})
    if not isinstance(headers, dict) or not all(
            isinstance(k, str) and isinstance(v, str) and "\n" not in v and "\r" not in v
            for k, v in headers.items()):
        raise _Skip(loc + ("headers",), "headers must be an object of strings, each on one line")
    return dict(headers)


def _allowed_env(hook: dict[str, Any], loc: tuple[Any, ...]) -> frozenset[str]:
    names = hook.get("allowedEnvVars", [])
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise _Skip(loc + ("allowedEnvVars",), "allowedEnvVars must be a list of variable names")
    return frozenset(names)


def _unknown_keys(obj: dict[str, Any], known: Sequence[str], loc: tuple[Any, ...]) -> list[_Skip]:
    """A word for each key agent-tui does not know: named and ignored, never a reason to
    drop a guard (the hook runs with what it does know)."""
    said = []
    for key in obj:
        if key not in known:
            close = difflib.get_close_matches(key, known, n=1)
            hint = f' (did you mean "{close[0]}"?)' if close else ""
            said.append(_Skip(loc + (key,), f"unknown key {json.dumps(key)}{hint} ignored; "
                              f"known keys: {', '.join(known)}"))
    return said


def _where(source: HooksSource, loc: tuple[Any, ...]) -> tuple[int | None, int | None]:
    while True:
        if loc in source.where:
            return source.where[loc]
        if not loc:
            return None, None
        loc = loc[:-1]


def _dotted(loc: tuple[Any, ...]) -> str:
    out = "hooks"
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out
