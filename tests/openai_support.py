"""Helpers for the OpenAI-wire tests: a provider entry for a fake, a real session
(no screen) on it, a scripted bash call, a conversation with model switches."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agent_tui.core.calls.permission import AllowAll
from agent_tui.core.calls.tool import ToolSet
from agent_tui.core.journal.journal import Journal
from agent_tui.core.services.deps import AgentConfig, SessionDeps
from agent_tui.core.session.session import Session
from agent_tui.protocol import SetModel, UserMessage
from agent_tui.providers.base import Provider
from agent_tui.providers.factory import make_configured, routed
from agent_tui.tools.bash import BashTool
from tests.fake_openai import Call, FakeOpenAIServer, Reply
from tests.harness import Recorder, Running


def entries(url: str, api: str = "openai-chat") -> dict[str, Any]:
    return {"fake": {"api": api, "baseURL": url, "apiKeyEnv": "FAKE_OPENAI_KEY",
                     "models": {"gpt-test": {"contextWindow": 128_000, "images": True},
                                "reasoner": {"reasoning": True}}}}


def session(provider: Provider, workspace: Path, model: str) -> Running:
    journal = Journal()
    rec = Recorder()
    deps = SessionDeps(config=AgentConfig(workspace=workspace, model=model),
                       provider=provider, tools=ToolSet([BashTool(grace=0.5)]),
                       policy=AllowAll(), journal=journal, emit=rec)
    return Running(Session(deps), rec, journal)


def fake_session(fake: FakeOpenAIServer, workspace: Path, *, api: str = "openai-chat",
                 model: str = "gpt-test") -> Running:
    """A session whose default provider is ``fake`` (FAKE_OPENAI_KEY must be set)."""
    configured = entries(fake.url, api)
    default = make_configured("fake", configured)
    return session(routed("fake", default, lambda n: make_configured(n, configured), configured),
                   workspace, model)


def bash(command: str, call_id: str | None = None, **extra: Any) -> Reply:
    call = Call("bash", json.dumps({"command": command}))
    call.id = call_id or call.id
    return Reply(calls=[call], **extra)


async def converse(run: Running, *steps: str) -> None:
    """Each step a user message sent and its turn waited for, or ``/model NAME``: a
    switch, waited for."""
    switches = len(run.rec.of("model_changed"))
    for step in steps:
        if step.startswith("/model "):
            run.submit(SetModel(model=step.removeprefix("/model ")))
            switches += 1
            await run.rec.wait_type("model_changed", switches)
        else:
            run.submit(UserMessage(text=step))
            await run.idle()
