"""Permission calls for the policy's tests: a fake bash and MCP tool, the real file
tools, a workspace, and a policy over it."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import create_model

from agent_tui.core.calls.tool import Tool, ToolContext, ToolResult
from agent_tui.permissions import PermissionRules, Permissions
from agent_tui.protocol import Verdict
from agent_tui.tools.files import EditFileTool, ReadFileTool, WriteFileTool


class _FakeTool(Tool):
    """A tool that only has a name and an input: the policy never runs it."""

    async def run(self, args, ctx: ToolContext) -> ToolResult:  # pragma: no cover
        return ToolResult.ok("")


def fake_tool(tool_name: str, fields: dict[str, tuple[type, object]]) -> Tool:
    """A tool named ``tool_name`` whose input has ``fields`` (name: (type, default))."""
    model = create_model(f"{tool_name}_input", **fields)  # type: ignore[call-overload]
    return type(f"Fake_{tool_name}", (_FakeTool,), {"name": tool_name, "description": tool_name,
                                                     "Input": model})()


BASH = fake_tool("bash", {"command": (str, ...)})
MCP = fake_tool("mcp__github__create_issue", {"title": (str, "")})
READ, WRITE, EDIT = ReadFileTool(), WriteFileTool(), EditFileTool()


def bash(cmd: str):
    return BASH, BASH.parse({"command": cmd})


def write(path: str):
    return WRITE, WRITE.parse({"path": path, "content": "x"})


def edit(path: str):
    return EDIT, EDIT.parse({"path": path, "old_string": "a", "new_string": "b"})


def read(path: str):
    return READ, READ.parse({"path": path})


def mcp():
    return MCP, MCP.parse({"title": "t"})


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    return root


def policy(ws: Path, mode: str = "ask", **rules) -> Permissions:
    return Permissions(ws, mode, PermissionRules(**rules))


def verdict(p: Permissions, call) -> Verdict:
    return p.check(*call).verdict
