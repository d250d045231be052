"""Print mode's own lines: the run's opening line and its result, in Claude Code's shape.

``--output-format json`` writes one :class:`RunResult` when the run ends, and nothing
else on stdout; ``stream-json`` opens with a :class:`SessionStartedLine` and ends with
the same :class:`RunResult`, the Events in between. A script that reads Claude Code's
result (``claude -p --output-format json``) reads this one the same way.
"""

# Annotations are objects, not strings: pydantic would compile each field's string when
# the class is made, and a -p turn makes these classes whether it uses them or not.
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, Field


class OutputFormat(StrEnum):
    """What print mode writes on stdout (``--output-format``)."""

    TEXT = "text"  # the model's words (tool states and notices on stderr)
    JSON = "json"  # one RunResult at the end
    STREAM_JSON = "stream-json"  # every Event, one per line, between the two lines here


class ResultSubtype(StrEnum):
    """How the run ended, in Claude Code's words."""

    SUCCESS = "success"
    ERROR_MAX_TURNS = "error_max_turns"  # the --max-turns limit stopped it
    ERROR_MAX_BUDGET_USD = "error_max_budget_usd"  # the --max-budget-usd cap stopped it
    ERROR_DURING_EXECUTION = "error_during_execution"  # a failure, or an interrupt


class PermissionDenial(BaseModel):
    """A tool call that was refused, named and shaped as Claude Code names its tools."""

    tool_name: str
    tool_use_id: str
    tool_input: dict[str, Any] = Field(default_factory=dict)


class ServerToolUse(BaseModel):
    """The server tools' uses, as the API's ``usage.server_tool_use`` names them."""

    web_search_requests: int = 0


class ResultUsage(BaseModel):
    """The API's own counts, summed over every request of the run (sub-agents',
    compaction's and web searches' included)."""

    input_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    output_tokens: int = 0
    server_tool_use: ServerToolUse = Field(default_factory=ServerToolUse)


class SessionStartedLine(BaseModel):
    """The first line of a stream-json run."""

    type: Literal["session_started"] = "session_started"
    session_id: str
    model: str
    cwd: str
    permission_mode: str
    # As the model names them, when the run starts (MCP servers' join once ready).
    tools: list[str]


class RunResult(BaseModel):
    """The last line of a json or stream-json run."""

    type: Literal["result"] = "result"
    subtype: ResultSubtype
    is_error: bool
    result: str  # the final answer: the text of the run's last answer that had some
    session_id: str
    num_turns: int  # model requests the agent made in this run (its sub-agents' not counted)
    duration_ms: int
    duration_api_ms: int  # time spent receiving the model's answers
    total_cost_usd: float | None  # None: a model's price is unknown (never a guess)
    usage: ResultUsage
    permission_denials: list[PermissionDenial]
    errors: list[str] = Field(default_factory=list)  # what went wrong, when is_error
