"""The MCP config files, read again when they change during a session.

:class:`McpReload` looks at the files (``runtime/file_watch.py``: a stat each, a read
only of a file that moved) at turn boundaries: when a turn starts and when it ends,
never on a timer. When one changed it reads them again and brings the servers in
line: a server added is started, one removed is stopped, one whose entry changed is
restarted; servers left as they were keep running. One notice says what was done.
Claude Code's ``~/.claude.json``, rewritten on its every run, counts as changed only
when the parts of it that are read changed.

An edit that breaks something keeps the last good version and says why: a file that
no longer reads (invalid JSON, not an object) keeps every server it listed before;
a server entry that no longer reads keeps that server as it was. Servers that did
not come from these files (an ACP client's) are never touched.

A server of the project's ``.mcp.json`` (``held_file``) that is new or changed during
the session is not started without the user's yes: a command the agent ran may have
written that file. A changed one keeps running as it was approved; a new one waits for
the next session, where the user's approval decides. A notice says so.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agent_tui.runtime.file_watch import FileWatch, content_digest
from agent_tui.settings.mcp_servers import ConfigProblem, McpConfig, ServerConfig


class McpReload:
    """The servers the config files list, kept in line with the files."""

    def __init__(
        self,
        manager: Any,
        load: Callable[[], McpConfig],
        files: list[Path],
        tell: Callable[[str, str], None],
        *,
        fixed: frozenset[str] = frozenset(),
        digest: Callable[[Path], str] = content_digest,
        held_file: Path | None = None,
    ) -> None:
        self.manager = manager
        self._held_file = held_file
        self._load = load
        self._tell = tell  # (level, text)
        self._fixed = fixed  # names not from the files (an ACP client's servers)
        # digest: what of a file counts as a change (of ~/.claude.json only the parts read)
        self._watch = FileWatch(lambda: [f for f in files if f.is_file()], digest=digest)
        self._watch.look()
        self._good: dict[str, ServerConfig] = {
            name: conn.config for name, conn in manager.connections.items() if name not in fixed
        }
        self._task: asyncio.Task[None] | None = None

    def observe(self, event: Any) -> None:
        """The session's events: look at the files when a turn starts or ends."""
        if getattr(event, "type", "") in ("turn_started", "turn_ended"):
            self.check()

    def check(self) -> None:
        """Look at the files now; if they changed, apply the new config (on the loop)."""
        if not self._watch.look():
            return
        config = self._load()
        wanted, kept = self._merge(config)
        self._hold(wanted)
        added = [n for n in wanted if n not in self._good]
        removed = [n for n in self._good if n not in wanted]
        changed = [n for n in wanted if n in self._good and wanted[n] != self._good[n]]
        self._good = wanted
        problems = [p for p in config.problems if p.server is None or p.server not in self._fixed]
        if problems:
            why = "; ".join(str(p) for p in problems)
            keep = f" (kept as it was: {', '.join(kept)})" if kept else ""
            self._tell("warning", f"MCP config: {why}{keep}")
        if added or removed or changed:
            self._tell("info", "MCP config changed: " + _describe(added, removed, changed))
            self._run(self._apply(wanted, added, removed, changed))

    def _merge(self, config: McpConfig) -> tuple[dict[str, ServerConfig], list[str]]:
        """The new servers, with the last good version of what an edit broke."""
        wanted = {s.name: s for s in config.servers if s.name not in self._fixed}
        kept: list[str] = []
        for problem in config.problems:
            for name, good in self._good.items():
                if name not in wanted and _broken(problem, good):
                    wanted[name] = good
                    kept.append(name)
        return wanted, kept

    def _hold(self, wanted: dict[str, ServerConfig]) -> None:
        """Keep the project file's new or changed entries from starting (said once)."""
        if self._held_file is None:
            return
        held = [name for name, server in wanted.items()
                if Path(server.source) == self._held_file and self._good.get(name) != server]
        for name in held:
            if name in self._good:
                wanted[name] = self._good[name]  # as it was approved
            else:
                del wanted[name]
        if held:
            self._tell("warning", (
                f"MCP config: {', '.join(held)} in {self._held_file} changed during the session: "
                "not started without your yes (a command may have written that file); start "
                "a new session to be asked, or add the server to your own MCP config"))

    async def _apply(self, wanted: dict[str, ServerConfig], added: list[str],
                     removed: list[str], changed: list[str]) -> None:
        for name in removed:
            await self.manager.remove_server(name)
        for name in changed:
            await self.manager.restart_server(name, wanted[name])
        for name in added:
            self.manager.add_server(wanted[name])

    def _run(self, work: Any) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop (a test calling check() directly): run it now
            asyncio.run(work)
            return
        previous = self._task

        async def after_previous() -> None:
            if previous is not None and not previous.done():
                await asyncio.wait([previous])
            await work

        self._task = loop.create_task(after_previous(), name="mcp-reload")

    async def settled(self) -> None:
        """Wait for the last change to be applied (tests, shutdown)."""
        if self._task is not None:
            await asyncio.wait([self._task])


def _broken(problem: ConfigProblem, good: ServerConfig) -> bool:
    """Whether ``problem`` is an edit that broke ``good`` (its file, or its entry)."""
    if Path(problem.file) != Path(good.source):
        return False
    return problem.server is None or problem.server == good.name


def _describe(added: list[str], removed: list[str], changed: list[str]) -> str:
    parts = []
    if added:
        parts.append(f"started {', '.join(added)}")
    if removed:
        parts.append(f"stopped {', '.join(removed)}")
    if changed:
        parts.append(f"restarted {', '.join(changed)}")
    return "; ".join(parts)


__all__ = ["McpReload"]
