"""MCP server configuration: the project's ``.mcp.json``, the user's ``mcp.json`` and
Claude Code's ``~/.claude.json`` (its user and local scopes: :mod:`.claude_json`).

The files have the shape Claude Code uses::

    {"mcpServers": {
        "files": {"command": "npx", "args": ["-y", "some-server"], "env": {"KEY": "..."}},
        "web":   {"type": "http", "url": "http://127.0.0.1:8123/mcp", "headers": {"X": "..."}},
        "old":   {"type": "sse", "url": "http://127.0.0.1:8124/sse"}
    }}

The user file is ``$XDG_CONFIG_HOME/agent-tui/mcp.json`` (default
``~/.config/agent-tui/mcp.json``); the project file is ``<workspace>/.mcp.json``. On a
name clash: local scope over the project's over the user's ``mcp.json`` over Claude
Code's user scope (:func:`load_config`). ``${VAR}`` and
``${VAR:-default}`` are expanded in commands, arguments, env values, URLs and headers;
in the project's ``.mcp.json`` only names that hold no secret
(:func:`agent_tui.settings.project_env.project_may_expand`): a cloned repository's
server never gets the API key or a token through ``${...}``.

Loading never raises: every problem becomes a :class:`ConfigProblem` naming the file
(and the line and column of a JSON syntax error), and the other servers still load.
"""

# Annotations are objects, not strings: pydantic would compile each field's string when
# the class is made.
import json
import os
import re
from collections.abc import Mapping
from enum import StrEnum
from pathlib import Path
from typing import Any

from pydantic import Field

from agent_tui.protocol.model_base import DeferredModel
from agent_tui.paths import claude_state_file, user_config_dir
from agent_tui.plugins import plugin_servers
from agent_tui.config_file import read_config_text
from agent_tui.settings.project_env import project_may_expand
from agent_tui.settings.claude_json import ProjectApproval, read_claude_json

#: ``$XDG_CONFIG_HOME/agent-tui`` (``load_config``'s argument of that name shadows it).
_user_dir = user_config_dir

PROJECT_FILE = ".mcp.json"
USER_FILE = "mcp.json"

#: Server names become part of tool names (``mcp__SERVER__TOOL``), which the model API
#: restricts to these characters.
_NAME_OK = re.compile(r"^[A-Za-z0-9_-]+$")
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


class Transport(StrEnum):
    STDIO = "stdio"
    HTTP = "http"
    SSE = "sse"  # the legacy HTTP+SSE transport (an SSE stream, messages POSTed)
    SDK = "sdk"  # in the app driving agent-tui (the Agent SDK's in-process servers)


class OAuthOptions(DeferredModel):
    """A server entry's ``"oauth"`` (Claude Code's shape): for a server without dynamic
    client registration, the client id registered with it and the callback port its
    redirect URI names (``http://localhost:PORT/callback``); the scopes to ask for."""

    client_id: str | None = None
    callback_port: int | None = None
    scopes: str | None = None


class ServerConfig(DeferredModel):
    """One server, as configured (variables already expanded)."""

    name: str
    transport: Transport
    source: Path  # the file it came from
    command: str | None = None
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    oauth: OAuthOptions | None = None  # "oauth": a pre-registered client, a fixed port, scopes
    timeout_ms: int | None = None  # "timeout": its tools' call timeout (Claude Code's key)
    task_ttl_ms: int | None = None  # "taskTtl": how long the server is asked to keep a task (MCP tasks)

    def describe(self) -> str:
        if self.transport is Transport.STDIO:
            return " ".join([self.command or "", *self.args])
        if self.transport is Transport.SDK:
            return "in the app (Agent SDK)"
        return self.url or ""


class ConfigProblem(DeferredModel):
    """Something wrong in a config file; ``server`` is None when the whole file failed."""

    file: Path
    message: str
    server: str | None = None
    line: int | None = None
    column: int | None = None

    def __str__(self) -> str:
        where = str(self.file)
        if self.line is not None:
            where += f":{self.line}:{self.column}"
        who = f" (server {self.server!r})" if self.server else ""
        return f"{where}{who}: {self.message}"


class McpConfig(DeferredModel):
    servers: list[ServerConfig] = Field(default_factory=list)
    problems: list[ConfigProblem] = Field(default_factory=list)


def load_config(
    workspace: str | os.PathLike[str],
    *,
    user_config_dir: str | os.PathLike[str] | None = None,
    environ: Mapping[str, str] | None = None,
    include_project: bool = True,
    approved: ProjectApproval | None = None,
    claude_json: Path | None = None,
) -> McpConfig:
    """Every source's servers, a later one winning a name clash: Claude Code's user
    scope (``~/.claude.json``), the user's ``mcp.json``, the project's ``.mcp.json``,
    Claude Code's local scope (``~/.claude.json``'s entry for this project).

    The project's servers load when ``include_project`` (the project is trusted), else
    only those the user approved (``approved``, from the user's settings, joined with
    what ``~/.claude.json`` records for this project); a rejected one never does.
    ``claude_json``: that file (default: :func:`agent_tui.paths.claude_state_file`)."""
    env = os.environ if environ is None else environ
    root = Path(workspace)
    user_dir = Path(user_config_dir) if user_config_dir is not None else _user_dir(env)
    claude = read_claude_json(claude_json or claude_state_file(env), root)
    approval = claude.approval.joined(approved or ProjectApproval())
    by_name: dict[str, ServerConfig] = {}
    problems: list[ConfigProblem] = []
    if claude.problem is not None:
        problems.append(ConfigProblem(file=claude.path, message=claude.problem))

    def add(found: tuple[list[ServerConfig], list[ConfigProblem]]) -> None:
        problems.extend(found[1])
        by_name.update({server.name: server for server in found[0]})  # later sources win

    add(_parse_servers(claude.path, claude.user_servers, env))
    add(_load_file(user_dir / USER_FILE, env))
    if include_project or approval.approves_any:
        servers, file_problems = _load_file(root / PROJECT_FILE, _ProjectEnviron(env))
        allowed = [s for s in servers if approval.allows(s.name, trusted=include_project)]
        add((allowed, [p for p in file_problems if p.server is None
                       or approval.allows(p.server, trusted=include_project)]))
    add(_parse_servers(claude.path, claude.local_servers, env))
    for part in plugin_servers():  # the user's enabled plugins' .mcp.json: the user's own
        add(_parse_servers(part.file, part.value, env))
    return McpConfig(servers=list(by_name.values()), problems=problems)


def _load_file(path: Path, env: Mapping[str, str]) -> tuple[list[ServerConfig], list[ConfigProblem]]:
    try:
        text = read_config_text(path)
    except FileNotFoundError:
        return [], []
    except (OSError, UnicodeDecodeError) as exc:
        return [], [ConfigProblem(file=path, message=f"cannot read: {exc}")]
    if not text.strip():
        return [], []
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return [], [ConfigProblem(
            file=path, message=f"invalid JSON: {exc.msg}", line=exc.lineno, column=exc.colno
        )]
    if not isinstance(data, dict):
        return [], [ConfigProblem(file=path, message="expected a JSON object at the top level")]
    servers_raw = data.get("mcpServers")
    if servers_raw is None:
        return [], [ConfigProblem(file=path, message='no "mcpServers" object')]
    return _parse_servers(path, servers_raw, env)


def servers_of(
    path: Path, servers_raw: Any, env: Mapping[str, str]
) -> tuple[list[ServerConfig], list[ConfigProblem]]:
    """The servers of an ``mcpServers`` object from elsewhere (``--mcp-config``);
    ``path`` is where it is said to come from."""
    return _parse_servers(path, servers_raw, env)


def _parse_servers(
    path: Path, servers_raw: Any, env: Mapping[str, str]
) -> tuple[list[ServerConfig], list[ConfigProblem]]:
    """The servers of one ``mcpServers`` object (None: there is none)."""
    if servers_raw is None:
        return [], []
    if not isinstance(servers_raw, dict):
        return [], [ConfigProblem(file=path, message='"mcpServers" must be an object')]
    servers: list[ServerConfig] = []
    problems: list[ConfigProblem] = []
    for name, raw in servers_raw.items():
        try:
            server = _parse_server(path, str(name), raw, env)
            server.timeout_ms = _timeout(raw.get("timeout"))
            server.task_ttl_ms, bad_ttl = _task_ttl(raw.get("taskTtl"))
            servers.append(server)
            for note in (_unknown_keys(server, raw), bad_ttl):
                if note:
                    problems.append(ConfigProblem(file=path, server=str(name), message=note))
        except _Bad as exc:
            problems.append(ConfigProblem(file=path, server=str(name), message=str(exc)))
    return servers, problems


class _Bad(ValueError):
    pass


def _parse_server(path: Path, name: str, raw: Any, env: Mapping[str, str]) -> ServerConfig:
    if not _NAME_OK.match(name):
        raise _Bad("server names may only use letters, digits, '_' and '-'")
    if "__" in name:
        raise _Bad("server names may not contain '__' (it separates server and tool in tool names)")
    if not isinstance(raw, dict):
        raise _Bad("expected an object")
    kind = raw.get("type")
    if kind is None:
        kind = "http" if "url" in raw and "command" not in raw else "stdio"
    if kind in ("http", "streamable-http", "streamable_http", "streamableHttp", "sse"):
        url = _expand(_need_str(raw, "url"), env, "url")
        if not url.startswith(("http://", "https://")):
            raise _Bad(f"url must start with http:// or https://, got {url!r}")
        headers = _str_map(raw.get("headers"), "headers", env)
        transport = Transport.SSE if kind == "sse" else Transport.HTTP
        return ServerConfig(name=name, transport=transport, source=path, url=url, headers=headers,
                            oauth=_oauth(raw.get("oauth"), env))
    if kind == "stdio":
        command = _expand(_need_str(raw, "command"), env, "command")
        args_raw = raw.get("args", [])
        if not isinstance(args_raw, list) or not all(isinstance(a, str) for a in args_raw):
            raise _Bad('"args" must be a list of strings')
        args = [_expand(a, env, "args") for a in args_raw]
        server_env = _str_map(raw.get("env"), "env", env)
        cwd = raw.get("cwd")
        if cwd is not None and not isinstance(cwd, str):
            raise _Bad('"cwd" must be a string')
        return ServerConfig(
            name=name, transport=Transport.STDIO, source=path, command=command, args=args,
            env=server_env, cwd=_expand(cwd, env, "cwd") if cwd else None,
        )
    if kind == "sdk":  # the app's own server: reached through it (mcp/app_servers.py)
        return ServerConfig(name=name, transport=Transport.SDK, source=path)
    raise _Bad(f'unknown "type" {kind!r} (expected "stdio", "http" or "sse")')


_OAUTH_KEYS = {"clientId": "client_id", "callbackPort": "callback_port", "scopes": "scopes"}
#: The keys a server entry may have; others are named in a problem (and ignored).
KNOWN_KEYS = {
    Transport.STDIO: {"type", "command", "args", "env", "cwd", "timeout", "taskTtl"},
    Transport.HTTP: {"type", "url", "headers", "oauth", "timeout", "taskTtl"},
    Transport.SSE: {"type", "url", "headers", "oauth", "timeout", "taskTtl"},
    Transport.SDK: {"type", "name"},
}


def _timeout(value: Any) -> int | None:
    """``"timeout"`` in milliseconds; as in Claude Code, below 1000 it is ignored."""
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool):
        raise _Bad('"timeout" must be a whole number of milliseconds')
    return value if value >= 1000 else None


#: The bounds of ``"taskTtl"`` (milliseconds): a minute to a day; an hour without it.
TASK_TTL_BOUNDS_MS = (60_000, 86_400_000)
TASK_TTL_DEFAULT_MS = 3_600_000


def _task_ttl(value: Any) -> tuple[int | None, str | None]:
    """``"taskTtl"`` in milliseconds, within the bounds; else the default, and why."""
    low, high = TASK_TTL_BOUNDS_MS
    if value is None:
        return None, None
    if isinstance(value, int) and not isinstance(value, bool) and low <= value <= high:
        return value, None
    return None, (f'"taskTtl" must be a whole number of milliseconds from {low} (a minute) to {high} (a day), '
                  f"got {value!r}: the default (an hour) is used")


def _oauth(value: Any, env: Mapping[str, str]) -> OAuthOptions | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise _Bad('"oauth" must be an object')
    if "clientSecret" in value:  # a cloned project must not choose where our logins go
        raise _Bad('"oauth.clientSecret": a client secret is never read from a settings file; '
                   "give it to agent-tui mcp login NAME --client-secret (kept owner-only with the tokens)")
    unknown = sorted(set(value) - set(_OAUTH_KEYS))
    if unknown:
        raise _Bad(f'"oauth": not supported by agent-tui: {", ".join(unknown)} '
                   f'(supported: {", ".join(_OAUTH_KEYS)})')
    port = value.get("callbackPort")
    if port is not None and (not isinstance(port, int) or isinstance(port, bool) or not 0 < port < 65536):
        raise _Bad('"oauth.callbackPort" must be a port number (1-65535)')
    for key in ("clientId", "scopes"):
        if key in value and (not isinstance(value[key], str) or not value[key]):
            raise _Bad(f'"oauth.{key}" must be a non-empty string')
    return OAuthOptions(
        client_id=_expand(value["clientId"], env, "oauth.clientId") if "clientId" in value else None,
        callback_port=port, scopes=value.get("scopes"))


def _unknown_keys(server: ServerConfig, raw: dict[str, Any]) -> str | None:
    unknown = sorted(set(raw) - KNOWN_KEYS[server.transport])
    return f"not supported by agent-tui, ignored: {', '.join(unknown)}" if unknown else None


def _need_str(raw: dict[str, Any], key: str) -> str:
    value = raw.get(key)
    if not isinstance(value, str) or not value:
        raise _Bad(f'"{key}" is required and must be a non-empty string')
    return value


def _str_map(value: Any, key: str, env: Mapping[str, str]) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise _Bad(f'"{key}" must be an object of strings')
    return {str(k): _expand(v, env, key) for k, v in value.items()}


class _ProjectEnviron(dict[str, str]):
    """The variables a project's ``.mcp.json`` may expand (:func:`_expand` names the
    others as refused, not as unset)."""

    def __init__(self, env: Mapping[str, str]) -> None:
        super().__init__({k: v for k, v in env.items() if project_may_expand(k)})


def _expand(text: str, env: Mapping[str, str], field: str) -> str:
    def sub(match: re.Match[str]) -> str:
        var, default = match.group(1), match.group(2)
        if isinstance(env, _ProjectEnviron) and not project_may_expand(var):
            if default is not None:
                return default  # never the value, which may be a secret
            raise _Bad(f"{field}: ${{{var}}} is not expanded in a project's .mcp.json: only "
                       "your own MCP config may hand a variable that can hold a secret to a "
                       "server (add the server to your user config)")
        if var in env:
            return env[var]
        if default is not None:
            return default
        raise _Bad(f"{field}: environment variable {var} is not set (use ${{{var}:-default}})")

    return _VAR.sub(sub, text)


__all__ = [
    "PROJECT_FILE",
    "USER_FILE",
    "ConfigProblem",
    "McpConfig",
    "ServerConfig",
    "Transport",
    "load_config",
    "user_config_dir",
]
