"""The commands the TUI runs itself, and what running a command line does.

The commands are the one table of every front end (``agent_tui/commands/builtin.py``);
``HANDLERS`` (at the end) gives each its handler. The menu, the help and the palette
list ``BUILTIN``, and ``run_command`` calls ``HANDLERS``; a command without a handler,
or a handler without a command, stops the import.

A command line never reaches the model as a message: a built-in command runs here, a
custom one is handed to the session (``agent_tui/commands/use.py``: its ``!`` lines
first when it has some, else the prompt it stands for, sent the way the keys said: a
message, a follow-up or send-now), an MCP server's prompt is got from the server and
sent the same way (``ui/app/mcp_requests.py``), and an unknown one is reported with the nearest
names and stays in the input to be fixed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from rich.console import RenderableType

from agent_tui.commands.builtin import BUILTINS
from agent_tui.ui.commands import definitions, preferences
from agent_tui.ui.commands.registry import ArgsNeed, Command, CommandKind, CommandLine, Commands
from agent_tui.ui.render.themes import THEMES
from agent_tui.ui.widgets.prompt_input import SendMode

if TYPE_CHECKING:
    from agent_tui.protocol import ImageAttachment, Op
    from agent_tui.ui.render.usage import UsageTally

# The first frame lists the commands but runs none: what running them takes (the Ops,
# the reports and the settings they read, the custom commands' runner) is imported by
# the handlers.

MIN_THINKING_BUDGET = 1024  # the API's least budget_tokens


class CommandHost(Protocol):
    """What the commands need of the app."""

    @property
    def usage(self) -> UsageTally: ...
    @property
    def running(self) -> bool: ...
    def submit(self, op: Op) -> None: ...
    def notice(self, level: str, text: str) -> None: ...
    def show_page(self, title: str, body: RenderableType) -> None: ...
    def action_help(self) -> None: ...
    def open_rewind(self) -> None: ...
    def open_resume(self) -> None: ...
    def open_theme_picker(self) -> None: ...
    def set_theme_name(self, name: str) -> None: ...
    def quit_app(self) -> None: ...
    def session_parts(self) -> tuple[Any, list[Any], Path] | None:
        """The session's policy, background work and workspace (None before it exists)."""

    def current_session(self) -> Any:
        """The session (its ``memory()`` and ``hooks()``), None before it exists."""

    def when_session(self, then: Callable[[], None]) -> None:
        """Run ``then`` once the session exists (never, if it cannot start)."""

    def open_mcp(self) -> None:
        """``/mcp``: the servers and their actions (ui/app/mcp_requests.py)."""

    def run_mcp_prompt(self, command: Command, args: str, mode: SendMode) -> None:
        """Get an MCP server's prompt for ``args`` (off the UI's thread), then send it."""

    @property
    def preferences(self) -> preferences.PreferencesHost:
        """Vim mode, the output style, the keybindings (``ui/app/preferences.py``)."""


def _help(host: CommandHost, args: str) -> None:
    host.action_help()


def _clear(host: CommandHost, args: str) -> None:
    if host.running:
        host.notice("info", "a turn is running: stop it (Esc) before /clear")
        return
    from agent_tui.protocol import ClearConversation

    host.submit(ClearConversation())


def _compact(host: CommandHost, args: str) -> None:
    from agent_tui.protocol import Compact

    host.submit(Compact(instructions=args))
    host.notice("info", "compacting after the running turn…" if host.running else "compacting…")


def _model(host: CommandHost, args: str) -> None:
    from agent_tui.protocol import ListModels, SetModel

    if args:
        host.submit(SetModel(model=args))
    else:
        host.submit(ListModels())
        host.notice("info", "asking which models there are…")


def thinking_setting(args: str) -> str | None:
    """``off``, ``adaptive`` or a budget of at least MIN_THINKING_BUDGET; None if bad."""
    word = args.strip().lower()
    if word in ("off", "adaptive"):
        return word
    if word.isdigit() and int(word) >= MIN_THINKING_BUDGET:
        return str(int(word))
    return None


def _thinking(host: CommandHost, args: str) -> None:
    setting = thinking_setting(args)
    if setting is None:
        host.notice("warning", f"/thinking takes off, adaptive or a budget of at least "
                               f"{MIN_THINKING_BUDGET} tokens, not {args!r}")
        return
    from agent_tui.protocol import SetThinking

    host.submit(SetThinking(thinking=setting))


def _cost(host: CommandHost, args: str) -> None:
    from agent_tui.ui.commands import reports

    host.show_page("cost", reports.cost_report(host.usage))


def _context(host: CommandHost, args: str) -> None:
    from agent_tui.protocol import ShowContext

    host.submit(ShowContext())


def _session_or_say(host: CommandHost) -> Any:
    session = host.current_session()
    if session is None:
        host.notice("info", "the session is still starting")
    return session


def _memory(host: CommandHost, args: str) -> None:
    from agent_tui.ui.commands import reports

    session = _session_or_say(host)
    if session is not None:
        problems = getattr(session, "memory_problems", [])
        host.show_page("memory", reports.memory_report(session.memory(), problems))


def _init(host: CommandHost, args: str) -> None:
    from agent_tui.core.memory.prompt import INIT_PROMPT
    from agent_tui.protocol import UserMessage

    host.submit(UserMessage(text=INIT_PROMPT))


def _hooks(host: CommandHost, args: str) -> None:
    from agent_tui.ui.commands import reports

    session = _session_or_say(host)
    if session is not None:
        host.show_page("hooks", reports.hooks_report(session.hooks()))


def _plugin(host: CommandHost, args: str) -> None:
    from agent_tui.ui.commands.plugin_actions import plugin_command

    plugin_command(host, args)


def _resume(host: CommandHost, args: str) -> None:
    host.open_resume()


def _rename(host: CommandHost, args: str) -> None:
    from agent_tui.protocol import RenameSession

    host.submit(RenameSession(name=args))


def _add_dir(host: CommandHost, args: str) -> None:
    session = _session_or_say(host)
    if session is None:
        return
    given = Path(args.strip()).expanduser()
    folder = Path(os.path.realpath(session.workspace / given))
    if not folder.is_dir():
        why = "does not exist" if not folder.exists() else "is not a folder"
        host.notice("warning", f"/add-dir {args.strip()}: not added: {folder} {why}")
        return
    if folder in session.added_dirs or folder == Path(os.path.realpath(session.workspace)):
        host.notice("info", f"{folder} is already one the file tools use")
        return
    session.added_dirs.append(folder)
    if hasattr(session, "directory_added"):  # DirectoryAdded hooks
        session.directory_added(folder)
    host.notice("info", f"added {folder}: the file tools may read and write in it "
                "(absolute paths), as in the workspace")


def _export(host: CommandHost, args: str) -> None:
    """The conversation as Markdown, to FILE (relative: in the workspace) or to
    ``conversation-<session id>.md`` there."""
    from agent_tui.atomic import write_atomic
    from agent_tui.core.history.export import conversation_markdown

    session = _session_or_say(host)
    if session is None:
        return
    session_id = session.deps.config.session_id
    target = Path(args).expanduser() if args else Path(f"conversation-{session_id}.md")
    if not target.is_absolute():
        target = Path(session.workspace) / target
    try:
        text = conversation_markdown(session.deps.journal.records_in_full(), session_id=session_id)
        write_atomic(target.parent, target.name, text.encode("utf-8"))
    except (OSError, ValueError) as exc:
        host.notice("error", f"/export: cannot write {target}: {getattr(exc, 'strerror', None) or exc}")
        return
    host.notice("info", f"the conversation is in {target}")


def _rewind(host: CommandHost, args: str) -> None:
    host.open_rewind()


def _theme(host: CommandHost, args: str) -> None:
    if not args:
        host.open_theme_picker()
    elif args in THEMES:
        host.set_theme_name(args)
    else:
        host.notice("warning", f"unknown theme {args!r}: choose {', '.join(THEMES)}")


def _permissions(host: CommandHost, args: str) -> None:
    from agent_tui.ui.commands import reports
    from agent_tui.ui.link.session_facts import permission_facts

    parts = host.session_parts()
    if parts is None:
        host.notice("info", "the session is still starting")
        return
    policy, _background, workspace = parts
    host.show_page("permissions", reports.permissions_report(permission_facts(policy, workspace)))


def _mcp(host: CommandHost, args: str) -> None:
    parts = host.session_parts()
    if parts is None:
        host.notice("info", "the session is still starting")
        return
    host.open_mcp()


def _skills(host: CommandHost, args: str) -> None:
    session = _session_or_say(host)
    if session is not None:
        tool = _tool(session, lambda t: t.offers_skills)
        host.show_page("skills", definitions.skills_report(
            getattr(tool, "skills", None), session.workspace))


def _agents(host: CommandHost, args: str) -> None:
    session = _session_or_say(host)
    if session is not None:
        tool = _tool(session, lambda t: t.starts_agents)
        host.show_page("sub-agents", definitions.agents_report(
            getattr(tool, "agent_types", None), session.workspace))


def _tool(session: Any, fact: Callable[[Any], bool]) -> Any:
    """The session's tool of which ``fact`` holds, if any."""
    tools = getattr(session, "tools", None)
    return tools.first(fact) if tools is not None else None


def _quit(host: CommandHost, args: str) -> None:
    host.quit_app()


Handler = Callable[[CommandHost, str], None]

# Each built-in command's handler; the commands themselves, their words and their order
# are the one table of every front end (``agent_tui/commands/builtin.py``).
HANDLERS: dict[str, Handler] = {
    "help": _help, "clear": _clear, "compact": _compact, "model": _model,
    "thinking": _thinking, "cost": _cost, "context": _context, "memory": _memory,
    "init": _init, "hooks": _hooks, "resume": _resume, "rename": _rename,
    "add-dir": _add_dir, "export": _export, "rewind": _rewind, "theme": _theme,
    "permissions": _permissions, "mcp": _mcp, "skills": _skills, "agents": _agents,
    "vim": preferences.vim, "output-style": preferences.output_style,
    "keybindings": preferences.keybindings, "plugin": _plugin, "quit": _quit,
}
_ARGS = {"theme": "[" + "|".join(THEMES) + "]"}  # what only the TUI knows
BUILTIN: list[Command] = [Command(b.name, b.description, _ARGS.get(b.name, b.args), b.need)
                          for b in BUILTINS]
if set(HANDLERS) != {command.name for command in BUILTIN}:  # listed iff it has a handler
    raise RuntimeError(f"built-in commands without a handler, or handlers without a "
                       f"command: {sorted(set(HANDLERS) ^ {c.name for c in BUILTIN})}")


def prompt_op(text: str, mode: SendMode, images: Sequence[ImageAttachment] = ()) -> Op:
    from agent_tui.protocol import FollowUp, SendNow, UserMessage

    match mode:
        case SendMode.SEND_NOW:
            return SendNow(text=text, images=list(images))
        case SendMode.FOLLOW_UP:
            return FollowUp(text=text, images=list(images))
        case SendMode.MESSAGE:
            return UserMessage(text=text, images=list(images))


def run_command(host: CommandHost, commands: Commands, line: CommandLine, mode: SendMode) -> bool:
    """Run ``line``; False when it names no command (the text should stay in the input)."""
    command = commands.get(line.name)
    if command is None:
        near = commands.nearest(line.name)
        hint = f": did you mean {', '.join('/' + n for n in near)}?" if near else ": /help lists them"
        host.notice("warning", f"unknown command /{line.name}{hint}")
        return False
    if command.need is ArgsNeed.REQUIRED and not line.args and command.kind is CommandKind.BUILTIN:
        host.notice("info", f"usage: {command.usage}  ({command.description})")
        return False
    if command.kind is CommandKind.CUSTOM:
        session = host.current_session()
        if session is None:  # typed before the session exists: it runs once it does
            host.notice("info", f"/{line.name} runs once the session has started")
            def once_started() -> None:
                run_command(host, commands, line, mode)

            host.when_session(once_started)
            return True
        from agent_tui.commands.use import use_command

        use_command(session, command.spec, line.args,
                    send=lambda text: host.submit(prompt_op(text, mode)),
                    tell=lambda text: host.notice("warning", text))
        return True
    if command.kind is CommandKind.MCP_PROMPT:
        host.run_mcp_prompt(command, line.args, mode)
        return True
    HANDLERS[command.name](host, line.args)
    return True
