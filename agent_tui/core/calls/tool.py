"""The Tool interface every tool implements, and the result it returns.

The core knows tools only through this module: a name, a pydantic input model (its
JSON schema is what the model sees), whether a call is read-only, and ``run``, which
receives a cancel scope and an output sink. A tool never decides the turn's fate: on
cancel it stops what it started, and returns a :class:`ToolResult` that says honestly
how it ended.
"""

# Annotations are objects, not strings: pydantic would compile each field's string when
# the class is made.
import copy
import functools
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from enum import StrEnum
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Literal, Protocol, TypeVar

from pydantic import BaseModel, Field, ValidationError

from agent_tui.protocol.model_base import DeferredModel
from agent_tui.cancel import CancelReason, CancelScope
from agent_tui.protocol import Decision, PermissionMode, SideEffects, ToolState
from agent_tui.protocol import tool_names
from agent_tui.protocol.tool_names import (
    FileAccess,
    FileChange,
    HookResponse,
    ResultShown,
    RuleSubject,
)

if TYPE_CHECKING:
    from agent_tui.core.calls.agent_types import AgentType

Outcome = Literal[
    ToolState.SUCCEEDED, ToolState.FAILED, ToolState.CANCELLED_WHILE_RUNNING, ToolState.UNKNOWN
]


class Residue(DeferredModel):
    """A process of ours that could not be ended."""

    pid: int
    cmdline: str


class ToolResult(DeferredModel):
    """How a tool call ended, in facts."""

    outcome: Outcome
    content: str
    is_error: bool = False
    side_effects: SideEffects = SideEffects.NONE
    exit_code: int | None = None
    signal: str | None = None
    ended_by: CancelReason | None = None
    residue: list[Residue] = Field(default_factory=list)
    details: dict[str, Any] = Field(default_factory=dict)
    # Content blocks beyond the text (images), passed to the model after it inside
    # the tool_result, in the Messages API's shape.
    blocks: list[dict[str, Any]] | None = None

    @classmethod
    def ok(cls, content: str, side_effects: SideEffects = SideEffects.NONE) -> "ToolResult":
        return cls(outcome=ToolState.SUCCEEDED, content=content, side_effects=side_effects)

    @classmethod
    def error(cls, content: str, side_effects: SideEffects = SideEffects.NONE) -> "ToolResult":
        return cls(
            outcome=ToolState.FAILED, content=content, is_error=True, side_effects=side_effects
        )


class SubAgentSpawner(Protocol):
    """Sub-agents bound to one ``task`` call (``agent``: the type it names, if any)."""

    async def run(
        self, description: str, prompt: str, agent: "AgentType | None" = None
    ) -> ToolResult:
        """A foreground sub-agent under the call's scope."""

    def start_background(
        self, description: str, prompt: str, agent: "AgentType | None" = None
    ) -> ToolResult:
        """A background sub-agent; the result says its job id."""


class WebSearcher(Protocol):
    """The API's server-side web search, bound to one ``web_search`` call that was
    allowed (``core/turn/web_search.py``: ``Searcher``)."""

    async def search(self, query: str, allowed_domains: list[str] | None = None,
                     blocked_domains: list[str] | None = None,
                     on_progress: Callable[[str], None] = lambda _text: None) -> Any:
        """A ``SearchOutcome``: the search request's content, verbatim; raises
        ``SearchFailed`` with the provider's words. ``on_progress`` hears each search
        and its number of results as they come."""


class Confinement(StrEnum):
    """Where a call runs beyond what the session runs everything in."""

    NONE = "none"
    READ_ONLY = "read_only"  # plan mode: a read-only sandbox, no network


@dataclass
class ToolContext:
    """What a running tool call may use: its scope, workspace and output sink."""

    scope: CancelScope
    workspace: Path
    tool_use_id: str
    operation_id: str
    emit_output: Callable[[str], None] = lambda _text: None
    env: dict[str, str] = field(default_factory=dict)
    # Sub-agents bound to this call (core/subagents/subagent.py: Spawner), for the task tool.
    subagents: SubAgentSpawner | None = None
    # Plan mode's read-only sandbox, when the permission ruling asked for it.
    confinement: Confinement = Confinement.NONE
    # How the user approved this call (None: nobody was asked, a rule or mode allowed it).
    approval: Decision | None = None
    # Leaves plan mode (exit_plan_mode, once the user approved the plan): the mode the
    # session is in now, None when it was not in plan mode. None outside a session.
    leave_plan_mode: Callable[[Decision | None], PermissionMode | None] | None = None
    # Folders added to the workspace (``--add-dir``, ``/add-dir``, settings
    # ``permissions.additionalDirectories``): absolute, resolved; the file tools read
    # and write inside them as inside the workspace, confined the same way.
    added_dirs: tuple[Path, ...] = ()
    # The web search request of this call (only a session's tool runner gives one).
    web_search: WebSearcher | None = None
    # The session's id and the effort chosen for its requests (a skill's
    # ``${CLAUDE_SESSION_ID}`` and ``${CLAUDE_EFFORT}``); empty/None outside a session.
    session_id: str = ""
    effort: str | None = None


In = TypeVar("In", bound=BaseModel)


class Tool(ABC, Generic[In]):
    """A capability the model can call, generic over its input model ``In``.

    ``parse`` gives an ``In``, and ``run``, ``summary`` and the other questions about a
    call take one, so a tool's methods are typed by its own model without a cast.
    """

    # Set on the class, or per instance by a tool made at run time (an MCP server's
    # tool, the skill and task tools whose description lists what they offer).
    name: str
    description: str
    # The input model (typed per tool, so not a ClassVar, which cannot hold the type
    # variable).
    Input: type[In]
    read_only: bool = False
    # True when the tool reports each file it writes to the checkpoint layer itself;
    # otherwise the core snapshots around each side-effecting call (shell commands).
    reports_own_writes: ClassVar[bool] = False
    # True when cancelling with CancelReason.SEND_TO_BACKGROUND moves the running call
    # to the background (it keeps running) instead of stopping it.
    can_background: ClassVar[bool] = False
    # True when calls may run alongside other such calls even though they are not
    # read-only (sub-agents: each works on its own).
    concurrent: ClassVar[bool] = False
    # What Claude Code calls this tool (empty: the same as ours) and its other spellings
    # of it: users write those in permission rules and hook matchers, hooks read them.
    claude_name: ClassVar[str] = ""
    claude_aliases: ClassVar[tuple[str, ...]] = ()
    # Claude Code's tools agent-tui has none of, whose work this one does (a sub-agent
    # listing ``MultiEdit`` gets ``edit_file``).
    stands_in_for: ClassVar[tuple[str, ...]] = ()
    # Our input key -> Claude Code's, where they differ (a hook sees Claude Code's).
    claude_keys: ClassVar[Mapping[str, str]] = {}
    # Plan mode keeps the ruling of this tool's calls though they are not read-only: they
    # write nothing of the user's (the plan, fetches, sub-agents ruled by the same policy).
    plans: ClassVar[bool] = False
    # The files its calls read or edit by path (accept-edits allows an edit inside the
    # workspace unasked), and whether a rule naming it governs every tool of that access,
    # as Claude Code's ``Read`` and ``Edit`` rules do.
    file_access: ClassVar[FileAccess] = FileAccess.NONE
    family_rule: ClassVar[bool] = False
    # What a permission rule's specifier matches, and for NAME the input key naming it.
    rule_subject: ClassVar[RuleSubject] = RuleSubject.NONE
    names_key: ClassVar[str] = ""
    # Why a call is asked about when it names no command, path or address.
    asks_because: ClassVar[str] = "may have side effects"
    # How the front ends show it: the permission prompt's heading (empty: "Tool" and its
    # Claude Code name), ACP's kind of tool call, and, for a tool whose consecutive calls
    # fold into one transcript line, (verb, one, many): "read", "file", "files".
    prompt_title: ClassVar[str] = ""
    acp_kind: ClassVar[str] = "other"
    folds_as: ClassVar[tuple[str, str, str] | None] = None
    # The input keys naming the one file a call reads or edits and the line it starts
    # at (ACP's location of the call), and what a call does to that file (the previews
    # and diffs of the front ends).
    file_key: ClassVar[str] = ""
    line_key: ClassVar[str] = ""
    file_change: ClassVar[FileChange] = FileChange.NONE
    # The shape of the ``tool_response`` hooks get (Claude Code's tool's), and what of a
    # finished call's result the front ends show beside its line.
    hook_response: ClassVar[HookResponse] = HookResponse.PLAIN
    result_shown: ClassVar[ResultShown] = ResultShown.NONE
    # Its calls start sub-agents (a sub-agent is never given it).
    starts_agents: ClassVar[bool] = False
    # Its rules guard its kind of file access wherever else it happens (a command's
    # reads and writes, a search's findings, a memory file's import): one tool per
    # access, as Claude Code's ``Read`` and ``Edit`` rules do.
    guards_access: ClassVar[bool] = False
    # It is the shell: the user's command lines run through it (``!`` in the prompt, a
    # custom command's ``!`` lines), and its rules guard every command line. One tool.
    shell: ClassVar[bool] = False
    # Its calls run the session's skills (``/skills`` lists what it offers).
    offers_skills: ClassVar[bool] = False
    # Its call asks to leave plan mode (outside plan mode there is nothing to approve).
    leaves_plan: ClassVar[bool] = False
    # Its calls write the model's plan (the plan pane, ACP's plan, the Task hooks).
    writes_plan: ClassVar[bool] = False

    @property
    def stop_grace_s(self) -> float | None:
        """Seconds from TERM to KILL when a call is stopped (None: it has no processes)."""
        return None

    def input_schema(self) -> dict[str, Any]:
        return copy.deepcopy(_schema_of(self.Input))

    def parse(self, raw: dict[str, Any]) -> In:
        """Validate the model's input; raises :class:`InvalidInput` with a readable text."""
        try:
            return self.Input.model_validate(raw)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or 'input'}: {err['msg']}"
                for err in exc.errors()
            )
            raise InvalidInput(f"invalid input for {self.name}: {problems}") from None

    def is_read_only(self, args: In) -> bool:
        return self.read_only

    def runs_sandboxed(self, args: In) -> bool:
        """Whether this call runs inside the OS sandbox (then it needs no approval)."""
        return False

    def can_run_read_only(self, args: In) -> bool:
        """Whether this call can run with ``Confinement.READ_ONLY`` (plan mode)."""
        return False

    def plan_refusal(self) -> str:
        """Why plan mode refuses this tool's calls (the model is told)."""
        return f"{self.name} can change files or other state"

    def summary(self, args: In) -> str:
        """One line that tells a person what this call will do."""
        return f"{self.name} {args.model_dump_json()}"

    def rewind_caveat(self, raw_input: dict[str, Any]) -> str | None:
        """What rewinding the workspace's files cannot undo of this call, if anything."""
        if self.read_only:
            return None
        return (
            f"{self.name}: effects beyond the workspace's files (processes, network, "
            "other folders) are not undone"
        )

    @abstractmethod
    async def run(self, args: In, ctx: ToolContext) -> ToolResult: ...

    def spec(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "input_schema": self.input_schema(),
        }


# A tool of any input model, as the tool set holds them: which model is known only to
# the tool itself, so a caller passes it back only what its own ``parse`` gave.
AnyTool = Tool[Any]


def register_tool(tool: type[AnyTool]) -> None:
    """Make what a tool class says of itself known to the layers that read it by name
    (permission rules, hook matchers and payloads, the front ends)."""
    tool_names.register(tool_names.ToolFacts(
        name=tool.name, claude=tool.claude_name or tool.name, aliases=tool.claude_aliases,
        stands_in_for=tool.stands_in_for,
        keys=dict(tool.claude_keys), prompt_title=tool.prompt_title, acp_kind=tool.acp_kind,
        folds_as=tool.folds_as, file_access=tool.file_access, family_rule=tool.family_rule,
        rule_subject=tool.rule_subject, names_key=tool.names_key, file_key=tool.file_key,
        line_key=tool.line_key, file_change=tool.file_change, hook_response=tool.hook_response,
        result_shown=tool.result_shown, starts_agents=tool.starts_agents,
        guards_access=tool.guards_access, shell=tool.shell, offers_skills=tool.offers_skills,
        leaves_plan=tool.leaves_plan, writes_plan=tool.writes_plan,
    ))


@functools.cache
def _schema_of(model: type[BaseModel]) -> dict[str, Any]:
    """An input model's JSON schema, built once: every request offers it again."""
    schema = model.model_json_schema()
    schema.pop("title", None)
    for prop in schema.get("properties", {}).values():
        prop.pop("title", None)
    return schema


class InvalidInput(ValueError):
    pass


class ToolSet:
    """The tools a session offers, by name, in a stable order."""

    def __init__(self, tools: Iterable[AnyTool] = ()) -> None:
        self._tools: dict[str, AnyTool] = {}
        for tool in tools:
            self.add(tool)

    def add(self, tool: AnyTool) -> None:
        if tool.name in self._tools:
            raise ValueError(f"duplicate tool name: {tool.name}")
        self._tools[tool.name] = tool

    def remove(self, name: str) -> None:
        """Offer this tool no more (a server's tool list changed); no-op if absent."""
        self._tools.pop(name, None)

    def get(self, name: str) -> AnyTool | None:
        return self._tools.get(name)

    def first(self, fact: Callable[[AnyTool], bool]) -> AnyTool | None:
        """The first tool of which ``fact`` holds (``lambda t: t.starts_agents``): how a
        caller finds the tool that does a thing without naming it."""
        return next((tool for tool in self._tools.values() if fact(tool)), None)

    def names(self) -> list[str]:
        return list(self._tools)

    def specs(self) -> list[dict[str, Any]]:
        return [tool.spec() for tool in self._tools.values()]
