"""The wiring: a session as the command line chose it, built from every layer.

This is the one place that knows every layer: it picks the provider, builds the
tool registry and the permission policy, opens the session's journal, and hands
them to the core. The core is imported where it is used, not here: the TUI's first
frame must not wait for pydantic and the core's models (the session is built on the
core's thread).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent_tui.cli.options import Options, UsageError
from agent_tui.cli.mcp_wiring import open_mcp
from agent_tui.cli.provider_choice import cloud_setup, make_provider, provider_of_model
from agent_tui.paths import private_dir, state_home, use_setting_sources, user_config_dir

if TYPE_CHECKING:
    from agent_tui.core.journal.journal import Journal
    from agent_tui.core.session.session import Session
    from agent_tui.core.journal.store import SessionStore
    from agent_tui.protocol import BackgroundJobChanged, Event
    from agent_tui.providers.base import Provider
    from agent_tui.settings import LoadedSettings
    from agent_tui.settings.trust import Trust

# How long the first turn waits for MCP servers that are still starting.
MCP_READY_WAIT_S = 15.0


class Wiring:
    """Builds sessions for a front end.

    ``make_session(emit)`` opens the session the command line chose (new, or
    ``--resume`` / ``--continue``); ``open_session(emit, ...)`` opens any other one
    (ACP clients create and load several in one process).
    """

    def __init__(self, opts: Options, *, interactive: bool) -> None:
        self.opts = opts
        self.interactive = interactive
        self.idle_notify_s: float | None = None  # the TUI's: a person waits there
        self.stop_settle_s: float | None = None  # AgentConfig.stop_settle_s (the TUI sets it)
        self.home = private_dir(state_home())
        self._store: SessionStore | None = None
        self.chosen_id: str | None = None
        # Read once per workspace: the user's settings.json and the project's.
        self._settings: dict[Path, LoadedSettings] = {}
        self._trust: dict[Path, Trust] = {}
        use_setting_sources(opts.setting_sources)  # --setting-sources: the places read
        if opts.plugin_dirs:  # --plugin-dir: this run's plugins, beside the enabled ones
            from agent_tui.plugins import use_plugin_dirs

            use_plugin_dirs(opts.plugin_dirs)
        from agent_tui.core.memory.output_styles import add_style_source

        add_style_source(_plugin_output_styles)  # the enabled plugins' output styles
        # A cloud account is checked before anything starts: what is missing stops us here.
        from agent_tui.cli.cloud_env import take_cloud_env

        self.cloud_notes = take_cloud_env(opts)
        self.cloud = cloud_setup(opts)
        if opts.resume or opts.continue_:
            from agent_tui.core.journal.store import SessionNotFound

            try:
                info = self.store.find(opts.resume) if opts.resume else self.store.latest_for(opts.cwd)
            except SessionNotFound as exc:
                raise UsageError(str(exc)) from None
            self.chosen_id = info.id

    def containment_for(self, workspace: Path) -> Any:
        """What the commands run in (runtime/containment.py); raises UsageError when the
        sandbox was asked for and cannot run: then nothing may run at all."""
        from agent_tui.runtime.containment import session_containment
        from agent_tui.runtime.sandbox import SandboxUnavailable

        settings = self.settings_for(workspace)
        try:
            return session_containment(
                workspace, sandbox_flag=self.opts.sandbox, limits=settings.limits,
                sandbox=settings.sandbox, private=[self.home, user_config_dir()],
            )
        except SandboxUnavailable as exc:
            raise UsageError(str(exc)) from None

    def settings_for(self, workspace: Path) -> LoadedSettings:
        if workspace not in self._settings:
            from agent_tui.settings import load_settings

            extra = [self.opts.settings] if self.opts.settings is not None else []
            self._settings[workspace] = load_settings(
                workspace, extra=extra, trusted=self.trust_for(workspace).trusted,
                sources=self.opts.setting_sources)
        return self._settings[workspace]

    def trust_for(self, workspace: Path) -> Trust:
        """Whether the folder's own files may grant (settings/trust.py), asked once."""
        if workspace not in self._trust:
            from agent_tui.settings.trust import decide

            self._trust[workspace] = decide(workspace, flag=self.opts.trust, state=self.home)
        return self._trust[workspace]

    def answer_trust(self, workspace: Path, yes: bool) -> None:
        """The user's answer in the trust dialog: a yes is remembered for the folder."""
        from agent_tui.settings.trust import TrustSource, remember

        if yes:
            remember(workspace, self.home)
            self._trust[workspace] = self.trust_for(workspace).model_copy(
                update={"source": TrustSource.RECORD})
        self._settings.pop(workspace, None)

    @property
    def store(self) -> SessionStore:
        if self._store is None:
            from agent_tui.core.journal.store import SessionStore

            self._store = SessionStore(self.home)
        return self._store

    def make_session(self, emit: Callable[[Event], None]) -> Session:
        _, session = self.open_session(emit, session_id=self.chosen_id,
                                       fork=self.opts.fork_session)
        return session

    # The TUI's /resume (ui.link.core_host.SessionDirectory).

    def saved_sessions(self) -> list[Any]:
        return self.store.list()

    def session_maker(self, session_id: str) -> Callable[[Callable[[Event], None]], Session]:
        return lambda emit: self.open_session(emit, session_id=session_id)[1]

    def open_session(
        self,
        emit: Callable[[Event], None],
        *,
        session_id: str | None = None,
        cwd: Path | None = None,
        mcp_servers: list[Any] | None = None,
        fork: bool = False,
        fork_if_held: bool = True,
    ) -> tuple[str, Session]:
        """A new session (``session_id`` None) or a saved one; raises SessionNotFound.

        A saved session open in another agent process is forked (a new session from
        the same history, said in a notice); ``fork`` forks it in any case;
        ``fork_if_held`` False raises SessionHeld instead. ``mcp_servers``
        (``ServerConfig``s, e.g. those an ACP client sent) join the MCP config files'
        servers."""
        from agent_tui.core.journal.journal import Journal
        from agent_tui.runtime.process.orphans import start_orphan_reaper

        # This process is the subreaper of what its commands leave behind: reap the
        # orphans no run waits for (a daemon an MCP server started, a detached git).
        start_orphan_reaper()
        opened = self._hold(session_id, fork=fork, fork_if_held=fork_if_held)
        try:
            journal = Journal.load(opened.path) if session_id is not None else Journal(opened.path)
        except OSError as exc:
            opened.lock.release()
            raise UsageError(f"cannot read the journal {opened.path}: "
                             f"{exc.strerror or exc}") from None
        journal.lock = opened.lock  # closing the journal (the session) lets it go
        try:
            return self._open_held(emit, opened, journal, cwd=cwd, mcp_servers=mcp_servers)
        except BaseException:
            journal.close()
            raise

    def _hold(self, session_id: str | None, *, fork: bool, fork_if_held: bool) -> Any:
        """The session to open, held by this process (core/journal/store.py): a new one, the
        saved one, or a fork of it."""
        if session_id is None:
            return self.store.create()
        return self.store.open(session_id, fork=fork, fork_if_held=fork_if_held)

    def _open_held(
        self, emit: Callable[[Event], None], opened: Any, journal: Journal, *,
        cwd: Path | None, mcp_servers: list[Any] | None,
    ) -> tuple[str, Session]:
        from agent_tui.protocol import Notice, NoticeCode, NoticeLevel, PermissionMode
        from agent_tui.core.journal.journal import JournalWriteError
        from agent_tui.core.journal.records import AgentProcessRecord, SessionStarted
        from agent_tui.core.session.session import Session
        from agent_tui.core.usage.budget import RequestBudget
        from agent_tui.core.usage.hook_account import HookAccount
        from agent_tui.core.services.deps import AgentConfig, SessionDeps
        from agent_tui.core.usage.limits import ModelLimits
        from agent_tui.core.usage.pricing import PriceTable
        from agent_tui.providers.prices import free_models, provider_prices
        from agent_tui.core.subagents.subagent import SubAgents
        from agent_tui.core.usage.thinking import ThinkingError, parse_thinking
        from agent_tui.core.usage.usage import UsageMeter
        from agent_tui.tools.background import BackgroundJobs
        from agent_tui.runtime.process import owner_id
        from agent_tui.runtime.process.orphans import start_orphan_reaper
        from agent_tui.permissions import PermissionRules, Permissions
        from agent_tui.runtime.process import RunLimits
        from agent_tui.runtime.guard_sweep import GuardSweep
        from agent_tui.tools.bash import BashTool
        from agent_tui.tools.registry import default_tools
        from agent_tui.tools.search.tools import SearchTool

        opts = self.opts
        session_id = opened.id
        recorded = next((r.workspace for r in journal.records
                         if isinstance(r, (SessionStarted, AgentProcessRecord)) and r.workspace),
                        None)
        workspace = Path(recorded) if recorded else (cwd or opts.cwd).resolve()
        if opened.fork is not None:
            emit(_forked(opened))
        settings = self.settings_for(Path(workspace))
        for note in self.cloud_notes:
            emit(Notice(level=NoticeLevel.WARNING, text=note))
        for problem in settings.problem_details:  # a part skipped alone is a warning
            emit(Notice(level=NoticeLevel.WARNING if problem.only_this else NoticeLevel.ERROR,
                        text=str(problem)))
        damaged = journal.set_aside_notice()
        if damaged is not None:
            emit(damaged)
        from agent_tui.checkpoints import Checkpoints

        from agent_tui.cli.key_command import key_helper_for

        key_helper, key_problem = key_helper_for(opts, settings)
        if key_problem is not None:
            emit(Notice(level=NoticeLevel.WARNING, text=key_problem))
        opts = self.opts = provider_of_model(opts, settings.providers)
        provider = make_provider(opts, key_helper=key_helper, cloud=self.cloud,
                                 configured=settings.providers)
        if not (opts.model or os.environ.get("AGENT_TUI_MODEL") or settings.model
                or provider.default_model):
            raise UsageError(f"{opts.provider}: which model? give --model {opts.provider}/MODEL "
                             "(docs/providers.md)")
        jobs = BackgroundJobs(on_change=lambda info: emit(job_changed(info)))
        # the session's one list (AgentConfig.added_dirs): --add-dir, then the user's settings
        added_dirs = list(opts.add_dirs)
        for given in settings.additional_directories:
            folder = (Path(workspace) / Path(given).expanduser()).resolve()
            if not folder.is_dir():
                emit(Notice(level=NoticeLevel.WARNING, text=(
                    f"settings: permissions.additionalDirectories {given}: {folder} is not a "
                    "folder (not added)")))
            elif folder not in added_dirs:
                added_dirs.append(folder)
        checkpoints = Checkpoints(self.store.root / session_id / "checkpoints", workspace,
                                  added_dirs=added_dirs)
        skills, agent_types = self._definitions(Path(workspace), emit)
        tools = default_tools(
            workspace, jobs=jobs, on_before_write=checkpoints.record_pre_image,
            on_after_write=checkpoints.record_written,
            allow_private_fetch=settings.web_fetch_allow_private,
            web_search=settings.web_search_enabled, skills=skills, agent_types=agent_types,
        )
        self.containment = self.containment_for(Path(workspace))
        bash = tools.first(lambda tool: tool.shell)
        assert isinstance(bash, BashTool)  # default_tools always offers the shell
        bash.limits = RunLimits()  # the settings' limits and grace, configured just now
        bash.sandbox = self.containment.sandbox
        bash.sandbox_runs_unasked = (self.opts.sandbox if self.opts.sandbox is not None
                                     else settings.user_sandbox)
        bash.plan_sandbox = self.containment.plan
        # the guard paths a sandboxed command creates go where the sandbox cannot reach
        sweep = GuardSweep(self.store.root / session_id / "quarantine", notify=lambda text: emit(
            Notice(level=NoticeLevel.WARNING, text=text, code=NoticeCode.CONTAINMENT)))
        bash.sweep = sweep
        emit = _observed_by(emit, sweep.observe)  # at a turn's start, before the reloads
        if self.containment.notice is not None:
            emit(Notice(level=NoticeLevel.WARNING, text=self.containment.notice,
                        code=NoticeCode.CONTAINMENT))
        # Command line over settings files (project over user) over defaults.
        mode = opts.permission_mode or settings.default_mode or "ask"
        if mode == "auto" and settings.auto_disabled_by is not None:
            raise UsageError(
                f"auto mode (Claude Code's {PermissionMode.AUTO.claude_name}) is turned off by "
                f"permissions.disableBypassPermissionsMode in {settings.auto_disabled_by}")
        # the project's .mcp.json starts whole only in a trusted folder in auto mode
        trusted = mode == "auto" and self.trust_for(Path(workspace)).trusted
        mcp, mcp_reload = open_mcp(workspace, emit, self.store.root.parent,
                                   trusted=trusted, extra=mcp_servers or [],
                                   approved=settings.mcpjson)
        mcp.attach(tools)
        # Between turns: the config files are read again if they changed, then the
        # manager applies tool lists.
        emit = _observed_by(_observed_by(emit, mcp_reload.observe), mcp.observe)
        # --allowedTools / --disallowedTools stand above every settings file: they add
        # to its lists (a deny anywhere still wins, an ask still asks).
        rules = PermissionRules(allow=[*settings.allow, *opts.allowed_tools], ask=settings.ask,
                                deny=[*settings.deny, *opts.disallowed_tools])
        policy = Permissions(workspace, mode, rules, non_interactive=not self.interactive,
                             added_dirs=added_dirs)
        if policy.denies_reads:  # what Read may not see, a search does not show
            for name in tools.names():
                search = tools.get(name)
                if isinstance(search, SearchTool):  # grep, glob: every search of files
                    search.read_denied = policy.read_denied
        hooks, reload_hooks = self._hooks(workspace, settings, emit, mode=mode,
                                          current_mode=lambda: str(getattr(policy, "mode", mode)))
        emit = _observed_by(emit, reload_hooks.observe)  # hooks are re-read between turns
        config = AgentConfig(
            workspace=workspace,
            model=opts.model or os.environ.get("AGENT_TUI_MODEL") or settings.model
            or provider.default_model,
            session_id=session_id,
            env=dict(settings.env),
            effort=opts.effort or settings.effort,
            system_replaced_by=opts.system_prompt,
            system_appended=opts.append_system_prompt,
            output_style=settings.output_style,
            added_dirs=added_dirs,
            setup_trigger=opts.setup_trigger,
            idle_notify_s=self.idle_notify_s,
            stop_settle_s=self.stop_settle_s,
        )
        if config.effort and self.cloud is not None:  # said, not dropped in silence
            emit(Notice(level=NoticeLevel.WARNING, text=(
                f"effort {config.effort}: not sent on {provider.name} (effort goes only to "
                "models the Models API says take it, and the cloud has no Models API)")))
        try:
            config.thinking = parse_thinking(opts.thinking or settings.thinking)
        except ThinkingError as exc:  # a settings file's value: say so, think by default
            emit(Notice(level=NoticeLevel.ERROR, text=f"settings: {exc}"))
        prices = PriceTable({**provider_prices(opts.provider, settings.providers),
                             **settings.prices}, free=free_models(opts.provider,
                                                                  settings.providers))
        for price_problem in prices.problems:
            emit(Notice(level=NoticeLevel.ERROR, text=f"settings: {price_problem}"))
        caps = [c for c in (opts.max_budget_usd, settings.max_budget_usd) if c is not None]
        budget = RequestBudget(limit=opts.max_turns, max_usd=min(caps, default=None))
        hooks.provider, hooks.model = provider, lambda: config.model  # prompt hooks ask it
        hooks.mcp_tools = mcp.tools  # MCP tool hooks call the session's servers
        meter = UsageMeter(prices, on_cost=budget.charge)
        hooks.account = account = HookAccount(budget, meter, journal, emit)  # and pay here
        emit = _observed_by(emit, account.observe)
        deps = SessionDeps(config=config, provider=provider, tools=tools, policy=policy,
                           journal=journal, emit=emit, checkpoints=checkpoints,
                           subagents=SubAgents(journal, emit),
                           usage=meter,
                           limits=ModelLimits(settings.context_window), hooks=hooks,
                           budget=budget)
        from agent_tui.hooks.elicitation import hook_base, hooked_elicitor

        mcp.elicitor_hooks = hooked_elicitor(hooks, lambda: hook_base(deps), emit)
        # A fork's earlier agents are the source's: what they left running is its own.
        leftovers = self._leftovers(journal if opened.fork is None else None, emit)
        try:
            if not journal.records:
                journal.append(SessionStarted(
                    session_id=session_id, workspace=str(workspace),
                    provider=provider.name, model=config.model,
                ), durable=True)
            journal.append(AgentProcessRecord(owner=owner_id(), pid=os.getpid(),
                                              workspace=str(workspace)), durable=True)
        except JournalWriteError as exc:
            emit(exc.notice())
        session = Session(
            deps, background=[jobs, mcp, leftovers], on_start=[mcp.start, leftovers.announce],
            ready=[lambda: mcp.wait_started(MCP_READY_WAIT_S)],
        )
        session.context_notes = self.containment.describe().splitlines()
        session.badges = [self.containment.status] if self.containment.sandbox is not None else []
        return session_id, session

    def _definitions(self, workspace: Path, emit: Callable[[Event], None]) -> tuple[Any, Any]:
        """Skills and sub-agent types in Claude Code's folders (the project's and the
        user's), read once for the session; each bad file is a notice, the rest load."""
        from agent_tui.protocol import Notice, NoticeLevel
        from agent_tui.core.calls.agent_types import load_agent_types
        from agent_tui.tools.skills import load_skills

        skills = load_skills(workspace)
        agent_types = load_agent_types(workspace)
        from agent_tui.cli.plugin_wiring import add_plugin_definitions

        for problem in [*skills.problems, *agent_types.problems,
                        *add_plugin_definitions(skills, agent_types, workspace)]:
            emit(Notice(level=NoticeLevel.WARNING, text=str(problem)))
        return skills, agent_types

    def _leftovers(self, journal: Journal | None, emit: Callable[[Event], None]) -> Any:
        """What earlier agent processes of this session left running (resume)."""
        from agent_tui.protocol import Notice, NoticeLevel
        from agent_tui.core.journal.records import AgentProcessRecord
        from agent_tui.runtime.leftovers import Leftovers, find_leftovers
        from agent_tui.runtime.process import owner_id

        records = journal.records if journal is not None else []
        owners = {r.owner for r in records if isinstance(r, AgentProcessRecord)}
        found = find_leftovers(owners - {owner_id()})
        if found:
            listing = "; ".join(f"{r.pid} {r.cmdline}" for r in found)
            emit(Notice(level=NoticeLevel.WARNING, text=(
                f"{len(found)} process(es) from an earlier run of this session are still "
                f"running: {listing}. They are listed with the background jobs, where you "
                "can stop them.")))
        return Leftovers(found, emit)

    def _hooks(
        self, workspace: Path, settings: LoadedSettings, emit: Callable[[Event], None], *,
        mode: str, current_mode: Callable[[], str] | None = None,
    ) -> tuple[Any, Any]:
        """Hooks from every settings file, the project's too, in every mode (guards
        always run; a project's hook can only take away); and what re-reads them
        between turns when their files change (``hooks/reload.py``). They get the env of
        the user's files only: a project's never reaches the user's hooks."""
        from agent_tui.protocol import Notice, NoticeLevel
        from agent_tui.hooks import CommandHooks, load_hooks
        from agent_tui.hooks.reload import HooksReload

        config = load_hooks(settings)
        for problem in config.problems:
            emit(Notice(level=NoticeLevel.WARNING, text=str(problem)))
        # made even without hooks: a settings file may gain some during the session
        hooks = CommandHooks(
            config.commands, workspace=workspace, env=settings.user_env,
            permission_mode=current_mode or mode,
            interactive=self.interactive,
        )
        if settings.limits.stop_continues is not None:
            hooks.max_stop_continues = settings.limits.stop_continues
        extra = [self.opts.settings] if self.opts.settings is not None else []
        return hooks, HooksReload(hooks, workspace, emit=emit, extra=extra)


def _plugin_output_styles() -> tuple[list[Any], list[Any]]:
    """The enabled plugins' output styles, their module imported when styles are first
    listed: the plugins' manifests are pydantic models, which the TUI's first frame does
    not wait for."""
    from agent_tui.plugins.output_styles import plugin_output_styles

    return plugin_output_styles()


def _forked(opened: Any) -> Any:
    """The notice that says this session is a fork (once: when it is made)."""
    from agent_tui.protocol import Notice, NoticeCode, NoticeLevel
    from agent_tui.core.journal.records import ForkReason

    fork = opened.fork
    if fork.reason is ForkReason.ASKED:
        text = (f"forked session {fork.source} (--fork-session): this is session {opened.id}, "
                "starting from the same history; the original is left as it was")
    else:
        who = f"pid {fork.holder_pid}" if fork.holder_pid is not None else "a process that did not say its pid"
        text = (f"session {fork.source} is open in another agent-tui ({who}): this is a fork "
                f"of it, session {opened.id}, starting from the same history; the other agent "
                "keeps writing its own")
    return Notice(level=NoticeLevel.WARNING, text=text, code=NoticeCode.SESSION_FORKED)


def _observed_by(emit: Callable[[Event], None], observe: Callable[[Any], None]) -> Callable[[Event], None]:
    """``emit``, with each event then shown to ``observe`` (what it says follows it)."""

    def both(event: Event) -> None:
        try:
            emit(event)  # a front end that raises still lets the observer see the event
        finally:
            try:
                observe(event)
            except Exception:
                pass  # an observer's bug must not break the core's emit

    return both


def job_changed(info: Any) -> BackgroundJobChanged:
    """A background command's news, as the core's event."""
    from agent_tui.protocol import BackgroundJobChanged

    if info.signal:
        detail = f"{info.signal}" + (f" ({info.ended_by})" if info.ended_by else "")
    elif info.exit_code is not None:
        detail = f"exit {info.exit_code}"
    else:
        detail = f"pid {info.pid}" if info.pid else ""
    return BackgroundJobChanged(
        id=info.shell_id, kind="shell", description=info.command, state=str(info.state),
        detail=detail, tool_use_id=info.tool_use_id,
    )
