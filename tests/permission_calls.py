"""Permission calls for the policy's tests: a fake bash and MCP tool, the real file
tools, a workspace, and a policy over it."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel

from agent_tui.core.calls.tool import Tool, ToolContext, ToolResult
from agent_tui.permissions import PermissionRules, Permissions
from agent_tui.protocol import Verdict
from agent_tui.tools.files import EditFileTool, ReadFileTool, WriteFileTool


class FakeBash(Tool):
    name = "bash"
    description = "runs a command"

    class Input(BaseModel):
        command: str

    async def run(self, args, ctx: ToolContext) -> ToolResult:  # pragma: no cover
        return ToolResult.ok("")


class FakeMcp(Tool):
    name = "mcp__github__create_issue"
    description = "an MCP tool"

    class Input(BaseModel):
        title: str = ""

    async def run(self, args, ctx: ToolContext) -> ToolResult:  # pragma: no cover
        return ToolResult.ok("")


BASH, MCP = FakeBash(), FakeMcp()
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
