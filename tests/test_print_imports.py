"""What a print-mode request imports of the Anthropic SDK: the client and the messages
API, not the SDK's every type (``make bench`` times ``-p``; this says what is on its path).

Each probe is a fresh interpreter: the test process has the SDK loaded already."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agent_tui.providers.anthropic_lazy import _plan, _Shape

ROOT = Path(__file__).resolve().parents[1]

#: Packages a request never reads; a plain ``import anthropic`` imports them all.
NOT_FOR_A_REQUEST = ("anthropic.lib.vertex", "anthropic.lib.bedrock", "anthropic.lib.aws",
                     "anthropic.resources.beta.organization", "anthropic.lib._tracing._tools",
                     "anthropic.lib._tracing._work", "anthropic.types.beta.sessions.beta_managed_agents_session_event",
                     # the error types a failed request maps its status and code to
                     "anthropic.types.file_expired_error", "anthropic.types.beta.beta_invalid_metadata_error",
                     # the request types the tracing's type alias names, and the beta message a
                     # structured output's parser reads
                     "anthropic.types.beta.message_create_params", "anthropic.types.beta.beta_message")

NAMES = """
import anthropic, json
def name(value):
    what = getattr(value, '__qualname__', getattr(value, '__name__', type(value).__name__))
    return f"{getattr(value, '__module__', '')}.{what}"
# and names star imports bind (``from .lib.vertex import *``, ``from .lib.streaming import *``,
# the latter's aliases and its ``TypeAlias``): not in ``__all__``
names = [*anthropic.__all__, "AnthropicVertex", "AsyncAnthropicBedrock", "TextEvent",
         "BetaMessageStopEvent", "BetaContentBlockStopEvent", "TypeAlias"]
# the class of the error each failed request gets: by status, and by status and code
import httpx2
from anthropic._base_client import make_status_error
def error(status, code):
    body = {"type": "error", "error": {"type": "x", "details": {"error_code": code}}}
    response = httpx2.Response(status, request=httpx2.Request("POST", "http://127.0.0.1:9"))
    return type(make_status_error("failed", body=body, response=response)).__qualname__
errors = [error(s, c) for s, c in ((400, None), (404, "file_expired"), (409, "storage_in_use"),
                                   (418, None), (503, "change_outcome_unknown"), (529, None))]
# and every name the lazy sub-packages' ``__init__`` files bind (tracing, managed-agent sessions)
from importlib import import_module
from pathlib import Path
from agent_tui.providers.anthropic_lazy import _plan
inner = {}
for package in ("anthropic.lib._tracing", "anthropic.types.beta.sessions"):
    module = import_module(package)
    init = Path(anthropic.__file__).parent.joinpath(*package.split(".")[1:], "__init__.py")
    inner.update({f"{package}.{n}": name(getattr(module, n)) for n in _plan(package, init)[1]})
"""


def probe(code: str, home: Path | None = None) -> object:
    """What ``code`` printed last, run in a fresh interpreter with its own state folder
    (``home``: where the SDK's kept plans are, else a new one)."""
    import os
    import tempfile

    env = dict(os.environ, AGENT_TUI_HOME=str(home or tempfile.mkdtemp(prefix="agent-tui-probe-")))
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         timeout=120, check=True, env=env)
    return json.loads(out.stdout.strip().splitlines()[-1])


MODULES = ("loaded = [m for m in sys.modules if m.startswith('anthropic')]\n"
           "aliases = 'BetaMessageStopEvent' in vars(sys.modules['anthropic.lib.streaming'])\n")
BOTH = ("print(json.dumps({'loaded': loaded, 'inner': inner, 'errors': errors, 'aliases': aliases,"
        " 'names': {n: name(getattr(anthropic, n)) for n in sorted(names)}}))\n")


#: Fails a probe that reads the SDK's ``__init__`` files instead of the plans kept for them.
KEPT_ONLY = """
from agent_tui.providers import anthropic_lazy
def _read(*args):
    raise AssertionError("the SDK's files were read again")
reads = anthropic_lazy._plan, anthropic_lazy._plan_module
anthropic_lazy._plan = anthropic_lazy._plan_module = _read
"""


@pytest.fixture(scope="module")
def lazy(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """One interpreter: a request through agent-tui's lazy SDK, the modules it loaded,
    then every exported name (which loads the rest). It runs with the plans an earlier
    run kept, and reads none of the SDK's ``__init__`` files itself."""
    home = tmp_path_factory.mktemp("state")
    probe("from agent_tui.providers import anthropic_lazy\nanthropic_lazy.load()\nprint(1)", home)
    assert (home / "cache" / "anthropic-sdk-plans.json").stat().st_size > 10_000
    return probe(f"""{KEPT_ONLY}
import json, sys
import agent_tui.providers.anthropic as p
from anthropic.resources.messages import AsyncMessages
p.anthropic.AsyncAnthropic(api_key="k", base_url="http://127.0.0.1:9").messages
anthropic_lazy._plan, anthropic_lazy._plan_module = reads  # NAMES lists the sub-packages' names
{MODULES}{NAMES}{BOTH}""", home)


@pytest.fixture(scope="module")
def plain() -> Any:
    """One interpreter: a plain ``import anthropic``, its modules, its names."""
    return probe(f"import sys\n{NAMES}{MODULES}{BOTH}")


def test_a_request_imports_the_client_not_every_type(lazy: Any, plain: Any) -> None:
    loaded, everything = lazy["loaded"], plain["loaded"]
    assert isinstance(loaded, list) and isinstance(everything, list)
    assert [m for m in loaded if m.startswith(NOT_FOR_A_REQUEST)] == []
    assert len(loaded) < len(everything) / 2
    assert not lazy["aliases"] and plain["aliases"]  # pydantic generics built at import


def test_every_exported_name_is_the_one_a_plain_import_gives(lazy: Any, plain: Any) -> None:
    assert isinstance(plain["names"], dict) and len(plain["names"]) > 50
    assert lazy["names"] == plain["names"]
    assert plain["names"]["AnthropicVertex"].endswith(".AnthropicVertex")
    assert isinstance(plain["inner"], dict) and len(plain["inner"]) > 50
    assert lazy["inner"] == plain["inner"]


def test_a_failed_request_gets_the_error_class_a_plain_import_gives(lazy: Any, plain: Any) -> None:
    assert lazy["errors"] == plain["errors"]
    assert plain["errors"][:3] == ["BadRequestError", "FileExpiredError", "BetaStorageInUseError"]


def test_an_init_that_does_more_than_bind_names_is_imported_plainly(tmp_path: Path) -> None:
    init = tmp_path / "pkg" / "__init__.py"
    init.parent.mkdir()
    init.write_text("from .a import A\nprint('side effect')\n")
    with pytest.raises(_Shape):
        _plan("pkg", init)
    init.write_text('"""Doc."""\nfrom __future__ import annotations\nfrom .a import A as B\n'
                    "from . import c\n__all__ = ['B']\n")
    _, table, _ = _plan("pkg", init)
    assert table == {"B": ("a", "A")}


def test_kept_plans_hold_only_for_the_files_they_were_read_from(tmp_path: Path, monkeypatch: Any) -> None:
    from agent_tui.providers import anthropic_lazy as lazy_sdk

    monkeypatch.setenv("AGENT_TUI_HOME", str(tmp_path))
    sdk = tmp_path / "sdk"
    sdk.mkdir()
    files = [sdk / "__init__.py"]
    files[0].write_text("from .a import A\n")
    tables: Any = {name: ({"A": ("a", "A"), "B": ("x.y", "C")}, ["A"] if name == lazy_sdk.ROOT else None)
                   for name in lazy_sdk.LAZY}
    key = lazy_sdk._key(files)
    lazy_sdk._keep(key, tables)
    kept = tmp_path / lazy_sdk.PLANS_FILE
    assert kept.stat().st_mode & 0o777 == 0o600 and lazy_sdk._kept(key) == tables
    files[0].write_text("from .b import A\n")  # the SDK changed: its plans are read again
    assert lazy_sdk._kept(lazy_sdk._key(files)) is None and lazy_sdk._kept(key) == tables
    # a kept file that is not in the shape written is not taken, whatever its key says
    good = json.loads(kept.read_text())
    assert good["plans"][lazy_sdk.ROOT] == ["A a A\nB x.y C\n", "A"]
    for bad in (["A os;x A\n", None], ["A a A.b\n", None], ["A a\n", None], ["A a A", None],
                ["A a A\n", "A,B"], ["A a A\n"], [["A", "a", "A"], None], {"A": ["a", "A"]}):
        changed = json.loads(json.dumps(good))
        changed["plans"][lazy_sdk.ROOT] = bad
        kept.write_text(json.dumps(changed))
        assert lazy_sdk._kept(key) is None, bad
    for broken in ("", "{", "[]", json.dumps({**good, "plans": {}})):
        kept.write_text(broken)
        assert lazy_sdk._kept(key) is None
    # a state folder that cannot hold them: the files are read each run, nothing fails
    monkeypatch.setenv("AGENT_TUI_HOME", str(files[0]))
    lazy_sdk._keep(key, tables)
    assert lazy_sdk._kept(key) is None


#: One ``-p`` turn in a fresh interpreter, then what it loaded and which of the models of
#: the protocol, the journal and the conversation's items it built (written to PROBE_OUT).
TURN = """
import gc, json, os, sys
from agent_tui.cli import main
code = main()
collector = {"on": gc.isenabled(), "frozen": gc.get_freeze_count()}
modules = sorted(sys.modules)  # what the turn loaded, before this probe's imports below
from agent_tui.protocol import events, ops
from agent_tui.core.journal import records
from agent_tui.core.history import items
from agent_tui.providers import base
from agent_tui.checkpoints import models
from agent_tui.core.services import hooks_port
from agent_tui.mcp_catalog import elicitation
from agent_tui.plugins import manifest
from agent_tui.tools.skills import catalog
built = sorted(f"{m.__name__}.{n}" for m in (events, ops, records, items, base, models, hooks_port, elicitation,
                                             manifest, catalog) for n, c in vars(m).items()
               if isinstance(c, type) and c.__module__ == m.__name__ and c.__dict__.get("__pydantic_complete__"))
with open(os.environ["PROBE_OUT"], "w") as out:
    json.dump({"code": code, "modules": modules, "built": built, "gc": collector}, out)
"""

#: What a plain ``-p`` turn (no tool, no hook, no MCP server, no plugin) never needs.
NOT_FOR_A_PRINT_TURN = ("textual", "rich", "mcp", "agent_tui.ui", "agent_tui.acp", "yaml.emitter",
                        "anthropic.lib.bedrock", "anthropic.types.file_expired_error",
                        # a rewind's planner; a prompt, MCP or HTTP hook's run
                        "agent_tui.checkpoints.planner", "agent_tui.hooks.prompt_hook",
                        "agent_tui.hooks.http_hook", "agent_tui.hooks.mcp_hook",
                        # a plugin's manifest and options, with no plugin enabled
                        "agent_tui.plugins.manifest", "agent_tui.plugins.option",
                        # the messages API's resource, its batches and its arguments' types:
                        # the request is made as it makes it, without them
                        "anthropic.resources.messages", "anthropic.types.message_create_params",
                        "anthropic.types.messages",
                        # the typed events and blocks: the stream's events are read as sent
                        "anthropic.types.raw_message_stream_event", "anthropic.types.content_block",
                        # the Models API's resource, pages and types (the lookup reads its JSON)
                        "anthropic.resources.models", "anthropic.types.model_info",
                        # bash's grammar and the judges of a command line: no command to judge
                        "agent_tui.permissions.shell_parse", "agent_tui.permissions.command_judge",
                        "agent_tui.permissions.command_guard", "agent_tui.permissions.shell_wrappers",
                        "agent_tui.permissions.read_only", "agent_tui.permissions.shell_model",
                        # the process table: no command run, no earlier process of the session
                        "psutil")
#: Models a turn without tools, steering, rewinds or compaction never builds.
NOT_BUILT = ("agent_tui.core.journal.records.CompactionRecord", "agent_tui.core.journal.records.RewindRecord",
             "agent_tui.core.journal.records.HookRecord", "agent_tui.protocol.ops.Rewind",
             "agent_tui.protocol.events.PermissionRequested", "agent_tui.core.history.items.Compaction",
             # nor, with no tool call, hook, MCP server, plugin or skill: their models
             "agent_tui.providers.base.ToolUseStarted", "agent_tui.checkpoints.models.RewindPlan",
             "agent_tui.core.services.hooks_port.HookAnswer", "agent_tui.mcp_catalog.elicitation.Elicitation",
             "agent_tui.plugins.manifest.Plugin", "agent_tui.tools.skills.catalog.Skills")


def test_a_print_turn_loads_no_front_end_and_builds_only_the_models_it_uses(fake_api, tmp_path: Path) -> None:
    from tests.fake_api import Reply
    from tests.print_agent import api_env

    fake_api.enqueue(Reply.text("the answer"))
    probe = tmp_path / "probe.json"
    out = subprocess.run([sys.executable, "-c", TURN, "-p", "say something", "--cwd", str(tmp_path)],
                         env=dict(api_env(tmp_path, fake_api), PROBE_OUT=str(probe)), cwd=ROOT,
                         stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
    assert "the answer" in out.stdout, out.stderr[-2000:]
    got = json.loads(probe.read_text())
    assert got["code"] == 0
    assert [m for m in got["modules"] if m.split(".")[0] in NOT_FOR_A_PRINT_TURN
            or m.startswith(NOT_FOR_A_PRINT_TURN[3:])] == []
    assert [m for m in NOT_BUILT if m in got["built"]] == []
    # built on first use: the turn's own events and records
    assert {"agent_tui.protocol.events.TurnEnded", "agent_tui.core.journal.records.UserMessageRecord"} <= set(got["built"])
    # start-up made its objects without the collector, then froze them; it is back on for the turn
    assert got["gc"]["on"] and got["gc"]["frozen"] > 50_000


def test_start_up_s_collector_is_back_when_the_session_could_not_be_made() -> None:
    import gc

    from agent_tui.cli.start_up import PausedCollection

    def fails() -> None:
        assert not gc.isenabled()
        raise RuntimeError("no session")

    assert gc.isenabled()
    try:
        with pytest.raises(RuntimeError):
            PausedCollection().then(fails)()
        assert gc.isenabled()
    finally:
        gc.unfreeze()
        gc.enable()


STAR = """
import json, sys
names = {}
exec("from anthropic.lib.streaming import *", names)
missing = [hasattr(m, "no_such_name") for m in (anthropic, anthropic.types, anthropic.lib.streaming)]
print(json.dumps({"before": before, "star": sorted(n for n in names if not n.startswith("__")),
                  "missing": missing}))
"""


def test_a_star_import_and_a_missing_name_act_on_a_lazy_package_as_on_a_plain_one() -> None:
    lazy = probe("import sys\nfrom agent_tui.providers import anthropic_lazy\nanthropic = anthropic_lazy.load()\n"
                 "before = 'BetaTextEvent' in vars(sys.modules['anthropic.lib.streaming'])\n" + STAR)
    plain = probe("import anthropic, anthropic.lib.streaming\nbefore = True\n" + STAR)
    assert isinstance(lazy, dict) and isinstance(plain, dict)
    assert lazy["before"] is False  # the aliases wait for the star import's ``__all__``
    assert lazy["star"] == plain["star"] and "BetaTextEvent" in plain["star"]
    assert lazy["missing"] == plain["missing"] == [False, False, False]


CALLED = """
import asyncio, json, sys
from agent_tui.providers import anthropic_lazy
anthropic = anthropic_lazy.load()
from opentelemetry import trace
HEAVY = ("anthropic.types.beta.message_create_params", "anthropic.types.beta.beta_message")
before = [m for m in HEAVY if m in sys.modules]
# a tracer provider given: the client reads each request's attributes for its span
client = anthropic.AsyncAnthropic(api_key="k", base_url="http://127.0.0.1:9", max_retries=0,
                                  open_telemetry={"tracer_provider": trace.NoOpTracerProvider()})
async def ask():
    try:
        await client.messages.create(model="m", max_tokens=1, messages=[{"role": "user", "content": "hi"}])
    except anthropic.APIConnectionError as exc:
        return type(exc).__name__
failed = asyncio.run(ask())
from anthropic.lib._tracing import _api_call
from anthropic.lib._parse import _response
from anthropic.lib.streaming import _types
from anthropic.resources.messages import messages
message = anthropic.types.Message.model_validate({
    "id": "m", "type": "message", "role": "assistant", "model": "m", "stop_reason": "end_turn",
    "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1},
    "content": [{"type": "text", "text": '{"a": 1}'}]})
parsed = messages.parse_response(output_format=dict, response=message)
print(json.dumps({"before": before, "failed": failed, "after": [m for m in HEAVY if m in sys.modules],
                  "real": _api_call.finish_api_call_span.__code__.co_filename.endswith("_api_call.py"),
                  "parsed": parsed.content[0].parsed_output, "type": type(parsed).__name__,
                  "same": _response.ResponseFormatT is _types.ResponseFormatT is messages.ResponseFormatT}))
"""


def test_what_the_sdk_calls_only_in_some_runs_loads_at_its_first_call() -> None:
    got = probe(CALLED)
    assert isinstance(got, dict)
    assert got["before"] == []  # neither the tracing's nor the parser's types at import
    assert got["failed"] == "APIConnectionError"  # the request went on past its span's attributes
    assert got["after"] == ["anthropic.types.beta.message_create_params", "anthropic.types.beta.beta_message"]
    assert got["real"]
    assert got["parsed"] == {"a": 1} and got["type"] == "ParsedMessage[~ResponseFormatT]"
    assert got["same"]  # the TypeVar made at once stays the module's


def test_the_sdk_s_spans_are_off_unless_a_tracer_provider_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    from agent_tui.providers.anthropic import AnthropicProvider, open_telemetry

    monkeypatch.delenv("OTEL_PYTHON_TRACER_PROVIDER", raising=False)
    assert open_telemetry() is False
    assert AnthropicProvider(api_key="k", base_url="http://127.0.0.1:9")._client._tracer is None
    monkeypatch.setenv("OTEL_PYTHON_TRACER_PROVIDER", "some_provider")
    assert open_telemetry() is None  # the SDK's own default: it loads the provider named


def test_a_command_s_default_memory_is_what_psutil_reads_without_importing_it() -> None:
    import psutil

    from agent_tui.runtime.process.limits import default_memory

    assert default_memory() == psutil.virtual_memory().total * 3 // 4 > 0
