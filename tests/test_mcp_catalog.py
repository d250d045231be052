"""A server's resources and prompts (tests/mcp_servers/catalog_server.py, the official
SDK over stdio): listed when it is ready, read and got for the user, listed again
when the server says they changed."""

from __future__ import annotations

import asyncio

import time
from pathlib import Path
from typing import Any

import pytest

from agent_tui.mcp import ServerState
from agent_tui.mcp_catalog.offers import (
    PromptArgsError,
    prompt_arguments,
    prompt_command,
    prompt_text,
    prompt_usage,
    resource_block,
    split_mention,
)
from tests.mcp_support import SERVERS, call, stdio

CATALOG = str(SERVERS / "catalog_server.py")


async def until(check: Any, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.02)


@pytest.mark.asyncio
async def test_resources_and_prompts_are_listed_read_and_got(make_manager: Any) -> None:
    manager, _ = await make_manager(stdio("notes", CATALOG))
    [status] = manager.status()
    assert status.state is ServerState.READY and status.resources == 3 and status.prompts == 2
    uris = {str(r.uri) for _s, r in manager.resources()}
    assert uris == {"notes://today", "notes://pixel", "notes://data"}

    block, images = resource_block("notes", "notes://today", await manager.read_resource("notes", "notes://today"))
    assert block == '<resource uri="notes:notes://today">\nbuy milk\ncall Ada\n</resource>' and images == []
    block, images = resource_block("notes", "notes://pixel", await manager.read_resource("notes", "notes://pixel"))
    assert "[image image/png, attached]" in block
    assert [i.media_type for i in images] == ["image/png"] and images[0].path == "notes:notes://pixel"
    block, _ = resource_block("notes", "notes://data", await manager.read_resource("notes", "notes://data"))
    assert "[binary application/octet-stream, 300 bytes, not shown]" in block
    with pytest.raises(Exception, match="notes://nope"):
        await manager.read_resource("notes", "notes://nope")

    prompts = {p.name: p for _s, p in manager.prompts()}
    review = prompts["review"]
    assert prompt_command("notes", "review") == "mcp__notes__review"
    assert prompt_usage(review) == "file [focus]"
    args = prompt_arguments(review, 'src/app.py "error handling and names"')
    assert args == {"file": "src/app.py", "focus": "error handling and names"}
    text, _ = prompt_text(await manager.get_prompt("notes", "review", args))
    assert text == "Please review src/app.py, looking at error handling and names."
    with pytest.raises(PromptArgsError, match="missing file"):
        prompt_arguments(review, "")
    with pytest.raises(PromptArgsError, match="takes no arguments"):
        prompt_arguments(prompts["hello"], "extra")
    # the last argument takes what is left over
    assert prompt_arguments(review, "a b c") == {"file": "a", "focus": "b c"}


@pytest.mark.asyncio
async def test_a_server_that_changes_its_resources_and_prompts_is_listed_again(make_manager: Any) -> None:
    manager, tools = await make_manager(stdio("notes", CATALOG))
    told: list[str] = []
    manager.on_catalog(told.append)
    result, _ = await call(tools, "mcp__notes__change", {})
    assert result.content == "changed"
    await until(lambda: len(told) >= 2)
    assert told == ["notes", "notes"]
    assert "notes://later" in {str(r.uri) for _s, r in manager.resources()}
    assert {p.name for _s, p in manager.prompts()} == {"review", "later"}


def test_a_mention_names_a_known_server() -> None:
    assert split_mention("notes:notes://today", {"notes"}) == ("notes", "notes://today")
    assert split_mention("src/app.py", {"notes"}) is None
    assert split_mention("other:x://y", {"notes"}) is None
    assert split_mention("notes:", {"notes"}) is None


def test_from_thread_before_the_servers_started_says_so(tmp_path: Path) -> None:
    from agent_tui.mcp import McpManager

    manager = McpManager([stdio("notes", CATALOG)], workspace=tmp_path, log_dir=tmp_path)
    future = manager.from_thread(manager.read_resource("notes", "notes://today"))
    with pytest.raises(RuntimeError, match="not started"):
        future.result(1)
