"""Cloud accounts: the real ``agent-tui -p`` on Amazon Bedrock and Google Vertex AI,
through the SDK's own clients, against fakes on loopback that speak each service's
wire format (Bedrock's event stream and SigV4, Vertex's streamRawPredict and Google's
OAuth tokens), driven by the same scripted replies as the Anthropic API's fake."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import pytest

from tests.fake_api import Reply
from tests.fake_api.bedrock import FakeBedrockServer
from tests.fake_api.vertex import FakeVertexServer
from tests.forked_runs import popen_agent, run_agent
from tests.print_agent import events_of, wait_until

KEY_ID, SECRET = "AKIAFAKETESTKEY00001", "fake/secret/key+for+tests"
BEDROCK_MODEL = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
VERTEX_MODEL = "claude-sonnet-4-5@20250929"
_CLOUD_VARS = ("AWS_", "GOOGLE_", "GCLOUD_", "CLOUDSDK_", "CLOUD_ML_", "VERTEX_", "ANTHROPIC_",
               "CLAUDE_CODE_")


def cloud_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """The machine's environment without any account of its own (no AWS files, no
    gcloud folder, no cloud metadata service), plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(_CLOUD_VARS)}
    env.update(AGENT_TUI_HOME=str(tmp_path / "home"), HOME=str(tmp_path / "user"),
               AWS_CONFIG_FILE=str(tmp_path / "no-aws-config"),
               AWS_SHARED_CREDENTIALS_FILE=str(tmp_path / "no-aws-credentials"),
               AWS_EC2_METADATA_DISABLED="true", CLOUDSDK_CONFIG=str(tmp_path / "no-gcloud"),
               NO_GCE_CHECK="true")
    env.update(extra)
    return env


def bedrock_env(tmp_path: Path, srv: FakeBedrockServer, **extra: str) -> dict[str, str]:
    return cloud_env(tmp_path, **{"CLAUDE_CODE_USE_BEDROCK": "1", "AWS_REGION": "us-east-1",
                                  "AWS_ACCESS_KEY_ID": KEY_ID, "AWS_SECRET_ACCESS_KEY": SECRET,
                                  "ANTHROPIC_BEDROCK_BASE_URL": srv.url, **extra})


def vertex_env(tmp_path: Path, srv: FakeVertexServer, **extra: str) -> dict[str, str]:
    key = srv.write_service_account(tmp_path / "service-account.json")
    return cloud_env(tmp_path, **{"CLAUDE_CODE_USE_VERTEX": "1", "CLOUD_ML_REGION": "us-east5",
                                  "GOOGLE_APPLICATION_CREDENTIALS": str(key),
                                  "ANTHROPIC_VERTEX_BASE_URL": srv.base_url, **extra})


def run(tmp_path: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return run_agent(["--cwd", str(tmp_path), *args], env=env, timeout=60,
                     stdin=subprocess.DEVNULL)


@pytest.fixture
def bedrock():
    with FakeBedrockServer(credentials={KEY_ID: SECRET}) as srv:
        yield srv
    assert srv.errors == []


@pytest.fixture
def vertex():
    with FakeVertexServer(regions=("us-east5", "europe-west1")) as srv:
        yield srv
    assert srv.errors == []


def tool_round_trip(tmp_path: Path, srv) -> None:
    """A thinking answer that calls a tool, then the answer after its result."""
    (tmp_path / "notes.txt").write_text("the notes say hello\n")
    srv.enqueue(
        Reply.message([{"type": "thinking", "thinking": "I should read the notes first."},
                       {"type": "tool_use", "name": "read_file", "input": {"path": "notes.txt"}}],
                      stop_reason="tool_use"),
        Reply.text("The notes say hello."),
    )


def check_round_trip(out: subprocess.CompletedProcess, srv) -> dict:
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["subtype"] == "success" and result["result"] == "The notes say hello."
    assert len(srv.usage) == 2 and srv.rejections == []
    # the tool result went back with the signed thinking block before the tool call
    second = srv.requests[1]["messages"]
    assert second[-2]["content"][0]["type"] == "thinking"
    assert second[-2]["content"][0]["signature"]
    assert second[-1]["content"][0]["type"] == "tool_result"
    assert "the notes say hello" in json.dumps(second[-1]["content"])
    # prompt caching: the second request read what the first one wrote
    assert srv.usage[0].cache_creation_input_tokens > 0
    assert srv.usage[1].cache_read_input_tokens >= srv.usage[0].cache_creation_input_tokens
    keys = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens",
            "output_tokens")
    assert result["usage"] == {**{k: sum(getattr(u, k) for u in srv.usage) for k in keys},
                               "server_tool_use": {"web_search_requests": 0}}
    return result


def test_bedrock_tool_round_trip_with_thinking_and_cache_signed_with_sigv4(bedrock, tmp_path):
    tool_round_trip(tmp_path, bedrock)
    out = run(tmp_path, bedrock_env(tmp_path, bedrock), "-p", "what do the notes say?",
              "--output-format", "json", "--thinking", "2048")
    check_round_trip(out, bedrock)
    assert bedrock.signed == [KEY_ID, KEY_ID]  # each request's signature checked out
    assert bedrock.invoked == [BEDROCK_MODEL, BEDROCK_MODEL]
    for body in bedrock.requests:  # the model is in the path; Bedrock's version in the body
        assert "model" not in body and "stream" not in body
        assert body["anthropic_version"] == "bedrock-2023-05-31"
        assert body["thinking"]["type"] == "enabled"
    journal = next((tmp_path / "home" / "sessions").glob("*/journal.jsonl")).read_text()
    assert '"provider":"bedrock"' in journal.replace(" ", "")


def test_vertex_tool_round_trip_with_thinking_and_cache_on_a_service_account(vertex, tmp_path):
    tool_round_trip(tmp_path, vertex)
    out = run(tmp_path, vertex_env(tmp_path, vertex), "-p", "what do the notes say?",
              "--output-format", "json", "--thinking", "2048")
    check_round_trip(out, vertex)
    assert vertex.token_requests == 1  # one token, used for both requests
    route = ("test-project", "us-east5", VERTEX_MODEL, "streamRawPredict")
    assert vertex.routes == [route, route]  # the project from the key file
    for body in vertex.requests:
        assert "model" not in body and body["anthropic_version"] == "vertex-2023-10-16"
        assert body["stream"] is True


def test_vertex_per_model_region_and_project_variables(vertex, tmp_path):
    vertex.enqueue(Reply.text("hi from Europe"))
    env = vertex_env(tmp_path, vertex, VERTEX_REGION_CLAUDE_4_5_SONNET="europe-west1",
                     ANTHROPIC_VERTEX_PROJECT_ID="other-project")
    out = run(tmp_path, env, "-p", "hello")
    # the project variable wins over the key file's; this fake's project is another one
    assert out.returncode == 1
    assert vertex.routes == [("other-project", "europe-west1", VERTEX_MODEL, "streamRawPredict")]
    assert "403" in out.stderr and "aiplatform.endpoints.predict" in out.stderr
    assert "Traceback" not in out.stderr
    env["ANTHROPIC_VERTEX_PROJECT_ID"] = "test-project"
    out = run(tmp_path, env, "-p", "hello")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "hi from Europe"
    assert vertex.routes[-1][:2] == ("test-project", "europe-west1")


def test_bedrock_wrong_secret_is_refused_as_bedrock_does_in_one_line(bedrock, tmp_path):
    env = bedrock_env(tmp_path, bedrock, AWS_SECRET_ACCESS_KEY="not-the-secret")
    out = run(tmp_path, env, "-p", "hello")
    assert out.returncode == 1
    assert bedrock.signed == [] and bedrock.refused_keys == ["InvalidSignatureException"]
    assert bedrock.usage == []  # the request never reached the model
    assert "403" in out.stderr and "signature we calculated does not match" in out.stderr
    assert "AWS refused the request" in out.stderr and "Traceback" not in out.stderr


def test_bedrock_api_key_is_sent_as_bearer_and_kept_from_commands(tmp_path):
    with FakeBedrockServer(api_keys=frozenset({"bedrock-api-key-123"})) as srv:
        srv.enqueue(Reply.tool_use("bash", {"command": "env"}), Reply.text("done"))
        env = cloud_env(tmp_path, CLAUDE_CODE_USE_BEDROCK="1", AWS_DEFAULT_REGION="eu-west-1",
                        AWS_BEARER_TOKEN_BEDROCK="bedrock-api-key-123",
                        ANTHROPIC_BEDROCK_BASE_URL=srv.url)
        out = run(tmp_path, env, "-p", "show the environment", "--permission-mode", "auto")
        assert out.returncode == 0, out.stderr
        assert srv.signed == ["bearer", "bearer"]
        tool_result = json.dumps(srv.requests[1]["messages"][-1])
        assert "PATH=" in tool_result and "bedrock-api-key-123" not in tool_result
        assert srv.errors == []


def test_esc_mid_stream_closes_the_bedrock_stream(bedrock, tmp_path):
    bedrock.enqueue(Reply.stall("Thinking about it", seconds=30))
    proc = popen_agent(["--cwd", str(tmp_path), "-p", "hello", "--output-format",
                                     "stream-json"], env=bedrock_env(tmp_path, bedrock),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            stdin=subprocess.DEVNULL)
    try:
        # (a long bound: the process starts on a busy machine; nothing here is timed)
        assert wait_until(lambda: bedrock.usage and bedrock.usage[0].streamed_output_tokens > 0,
                          timeout=60), "the stream never started"
        proc.send_signal(signal.SIGINT)  # print mode's Esc
        stdout, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, stderr
    assert bedrock.wait_for_disconnect(15)  # the stream's connection was closed
    events = events_of(stdout)
    assert "".join(e["text"] for e in events if e["type"] == "text_delta") == "Thinking about it"
    assert [e for e in events if e["type"] == "turn_ended"][-1]["status"] == "cancelled"


def test_a_bedrock_exception_frame_in_the_stream_is_retried(bedrock, tmp_path):
    bedrock.enqueue(Reply.stream_error("", "rate_limit_error", "Too many tokens, please wait"),
                    Reply.text("Whole answer"))
    out = run(tmp_path, bedrock_env(tmp_path, bedrock), "-p", "hello", "--output-format",
              "stream-json")
    assert out.returncode == 0, out.stderr
    events = events_of(out.stdout)
    retries = [e for e in events if e["type"] == "retry_scheduled"]
    assert len(retries) == 1 and "Too many tokens, please wait" in retries[0]["reason"]
    assert events[-1]["result"] == "Whole answer" and len(bedrock.requests) == 2


def test_vertex_refused_token_is_one_clear_line(vertex, tmp_path):
    env = vertex_env(tmp_path, vertex)
    key = json.loads(Path(env["GOOGLE_APPLICATION_CREDENTIALS"]).read_text())
    vertex.write_service_account(tmp_path / "rotated.json")  # the file's key is no longer valid
    Path(env["GOOGLE_APPLICATION_CREDENTIALS"]).write_text(json.dumps(key))
    out = run(tmp_path, env, "-p", "hello")
    assert out.returncode == 1 and vertex.routes == []
    assert "Google Cloud refused the credentials" in out.stderr
    assert "Invalid JWT" in out.stderr and "Traceback" not in out.stderr


def test_the_clouds_have_no_models_api_and_say_nothing_of_it(bedrock, tmp_path):
    bedrock.enqueue(Reply.text("fine"))
    out = run(tmp_path, bedrock_env(tmp_path, bedrock), "-p", "hello", "--model",
              "us.anthropic.claude-sonnet-4-5-20250929-v1:0", "--output-format", "stream-json")
    assert out.returncode == 0, out.stderr
    notices = [e for e in events_of(out.stdout) if e["type"] == "notice"]
    assert notices == [] and "Models API" not in out.stderr  # no lookup error spam
    bedrock.enqueue(Reply.text("fine"))
    out = run(tmp_path, bedrock_env(tmp_path, bedrock), "-p", "hello", "--effort", "high")
    assert out.returncode == 0, out.stderr
    assert "effort high: not sent on bedrock" in out.stderr  # said, not dropped in silence
    assert "output_config" not in bedrock.requests[-1]


BAD = [
    ({"CLAUDE_CODE_USE_BEDROCK": "1"}, "bedrock: no AWS region: set AWS_REGION"),
    ({"CLAUDE_CODE_USE_BEDROCK": "1", "AWS_REGION": "us-east-1"}, "bedrock: no AWS credentials"),
    ({"CLAUDE_CODE_USE_BEDROCK": "1", "AWS_REGION": "Virginia"}, "AWS_REGION=Virginia: not an AWS region"),
    ({"CLAUDE_CODE_USE_BEDROCK": "yes please"}, "CLAUDE_CODE_USE_BEDROCK=yes please: give 1"),
    ({"CLAUDE_CODE_USE_BEDROCK": "1", "CLAUDE_CODE_USE_VERTEX": "1"}, "are both on"),
    ({"CLAUDE_CODE_USE_BEDROCK": "1", "AWS_REGION": "us-east-1", "AWS_PROFILE": "work"},
     "AWS_PROFILE=work: no such profile"),
    ({"CLAUDE_CODE_USE_BEDROCK": "1", "AWS_REGION": "us-east-1", "AWS_BEARER_TOKEN_BEDROCK": ""},
     "AWS_BEARER_TOKEN_BEDROCK is empty"),
    ({"CLAUDE_CODE_USE_BEDROCK": "1", "AWS_REGION": "us-east-1", "AWS_BEARER_TOKEN_BEDROCK": "k",
      "ANTHROPIC_BEDROCK_BASE_URL": "bedrock.local"}, "ANTHROPIC_BEDROCK_BASE_URL=bedrock.local: not an http"),
    ({"CLAUDE_CODE_USE_VERTEX": "1"}, "vertex: no region: set CLOUD_ML_REGION"),
    ({"CLAUDE_CODE_USE_VERTEX": "1", "CLOUD_ML_REGION": "us-east5"},
     "vertex: no Google Cloud credentials (none found)"),
    ({"CLAUDE_CODE_USE_VERTEX": "1", "CLOUD_ML_REGION": "us-east5",
      "GOOGLE_APPLICATION_CREDENTIALS": "/nonexistent/key.json"}, "/nonexistent/key.json was not found"),
    ({"CLAUDE_CODE_USE_VERTEX": "1", "CLOUD_ML_REGION": "US East"}, "CLOUD_ML_REGION=US East: not a Google Cloud region"),
    ({"CLAUDE_CODE_USE_VERTEX": "1", "CLOUD_ML_REGION": "us-east5", "VERTEX_REGION_CLAUDE_4_5_SONNET": "x"},
     "VERTEX_REGION_CLAUDE_4_5_SONNET=x: not a Google Cloud region"),
    ({"CLAUDE_CODE_USE_VERTEX": "1", "CLOUD_ML_REGION": "global", "CLAUDE_CODE_SKIP_VERTEX_AUTH": "1"},
     "vertex: no Google Cloud project: set ANTHROPIC_VERTEX_PROJECT_ID"),
]


@pytest.mark.parametrize("variables,message", BAD, ids=[m for _, m in BAD])
def test_missing_or_bad_cloud_setup_is_one_line_and_exit_1(tmp_path, variables, message):
    out = run(tmp_path, cloud_env(tmp_path, **variables), "-p", "hello")
    assert out.returncode == 1
    assert out.stderr.count("\n") == 1 and message in out.stderr, out.stderr
    assert out.stdout == ""


def test_provider_flag_chooses_the_cloud_without_the_switch(vertex, tmp_path):
    vertex.enqueue(Reply.text("chosen by flag"))
    env = vertex_env(tmp_path, vertex)
    del env["CLAUDE_CODE_USE_VERTEX"]
    out = run(tmp_path, env, "--provider", "vertex", "-p", "hello")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "chosen by flag" and len(vertex.routes) == 1


def test_skip_auth_sends_no_credentials_for_a_gateway(tmp_path):
    with FakeBedrockServer(api_keys=frozenset({"gateway"})) as srv:
        env = cloud_env(tmp_path, CLAUDE_CODE_USE_BEDROCK="1", AWS_REGION="us-west-2",
                        CLAUDE_CODE_SKIP_BEDROCK_AUTH="1", ANTHROPIC_BEDROCK_BASE_URL=srv.url)
        out = run(tmp_path, env, "-p", "hello")
        assert out.returncode == 1  # this fake wants credentials: a gateway would add them
        assert srv.refused_keys == ["MissingAuthenticationTokenException"]
        assert "Missing Authentication Token" in out.stderr
        assert srv.requests and "authorization" not in srv.request_headers[0]


@pytest.mark.asyncio
async def test_model_list_on_a_cloud_is_one_line_saying_how_to_choose(tmp_path):
    from agent_tui.core.services.model_control import validate_model
    from agent_tui.providers.base import ProviderError
    from agent_tui.providers.cloud import BedrockProvider
    from agent_tui.providers.cloud_setup import bedrock_setup

    setup = bedrock_setup(cloud_env(tmp_path, AWS_REGION="us-east-1",
                                    AWS_BEARER_TOKEN_BEDROCK="k"))
    provider = BedrockProvider(setup)
    try:
        assert await provider.model_info("us.anthropic.claude-opus-4-6-v1") is None
        assert await validate_model(provider, "anything") is None  # nothing to check against
        with pytest.raises(ProviderError, match=r"bedrock has no model list here: give the "
                           r"model's id, /model ID \(for example us\.anthropic\."):
            await provider.list_models()
    finally:
        await provider.aclose()


def test_bedrock_region_and_keys_from_an_aws_profile(bedrock, tmp_path):
    (tmp_path / "aws-config").write_text("[profile work]\nregion = us-east-1\n")
    (tmp_path / "aws-credentials").write_text(
        f"[work]\naws_access_key_id = {KEY_ID}\naws_secret_access_key = {SECRET}\n")
    bedrock.enqueue(Reply.text("from the profile"))
    env = cloud_env(tmp_path, CLAUDE_CODE_USE_BEDROCK="1", AWS_PROFILE="work",
                    AWS_CONFIG_FILE=str(tmp_path / "aws-config"),
                    AWS_SHARED_CREDENTIALS_FILE=str(tmp_path / "aws-credentials"),
                    ANTHROPIC_BEDROCK_BASE_URL=bedrock.url)
    out = run(tmp_path, env, "-p", "hello")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "from the profile" and bedrock.signed == [KEY_ID]


def test_vertex_token_that_expires_is_fetched_again(tmp_path):
    # google-auth takes a token as expired a few minutes early: a 60 s one at once
    with FakeVertexServer(token_lifetime=60) as srv:
        srv.enqueue(Reply.tool_use("read_file", {"path": "a.txt"}), Reply.text("read"))
        (tmp_path / "a.txt").write_text("a\n")
        out = run(tmp_path, vertex_env(tmp_path, srv), "-p", "read a.txt")
        assert out.returncode == 0, out.stderr
        assert srv.token_requests == 2 and len(srv.usage) == 2
        assert srv.errors == []


def test_the_account_in_the_users_claude_settings_env_is_used(vertex, tmp_path):
    vertex.enqueue(Reply.text("from the settings"))
    shell = vertex_env(tmp_path, vertex)
    moved = {k: shell.pop(k) for k in ("CLAUDE_CODE_USE_VERTEX", "CLOUD_ML_REGION",
                                       "GOOGLE_APPLICATION_CREDENTIALS",
                                       "ANTHROPIC_VERTEX_BASE_URL")}
    claude = tmp_path / "user" / ".claude"
    claude.mkdir(parents=True)
    (claude / "settings.json").write_text(json.dumps({"env": moved}))
    (tmp_path / ".claude").mkdir()  # a project may not choose the account
    (tmp_path / ".claude" / "settings.json").write_text(json.dumps(
        {"env": {"CLAUDE_CODE_USE_BEDROCK": "1", "ANTHROPIC_BEDROCK_BASE_URL": "http://127.0.0.1:9"}}))
    out = run(tmp_path, shell, "-p", "hello")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "from the settings" and len(vertex.routes) == 1
    assert "env ANTHROPIC_BEDROCK_BASE_URL, CLAUDE_CODE_USE_BEDROCK is not used" in out.stderr


def test_a_sub_agent_s_model_alias_is_the_cloud_s_id(tmp_path):
    haiku = "us.anthropic.claude-haiku-4-5-20251001-v1:0"
    agents = tmp_path / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "quick.md").write_text(
        "---\nname: quick\ndescription: Quick looks\ntools: []\nmodel: haiku\n---\nBe quick.\n")
    models = {BEDROCK_MODEL: "claude-sonnet-4-5", haiku: "claude-haiku-4-5"}
    with FakeBedrockServer(credentials={KEY_ID: SECRET}, models=models) as srv:
        srv.enqueue(Reply.tool_use("task", {"description": "look", "prompt": "look quickly",
                                            "subagent_type": "quick"}),
                    Reply.text("looked"), Reply.text("All done."))
        out = run(tmp_path, bedrock_env(tmp_path, srv), "-p", "go", "--permission-mode", "auto")
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip().endswith("All done.")
        assert srv.invoked == [BEDROCK_MODEL, haiku, BEDROCK_MODEL]
        assert srv.errors == [] and srv.rejections == []


@pytest.mark.asyncio
async def test_model_alias_and_listing_in_a_session_on_vertex(tmp_path):
    from agent_tui.protocol import ListModels, SetModel
    from agent_tui.providers.cloud import VertexProvider
    from agent_tui.providers.cloud_setup import VertexSetup
    from tests.harness import start_session

    provider = VertexProvider(VertexSetup(region="us-east5", project="p", skip_auth=True))
    run = start_session(provider, [], tmp_path)
    run.submit(SetModel(model="opus"))
    await run.rec.wait_type("model_changed")
    assert run.rec.of("model_changed")[-1].model == "claude-opus-4-6"
    run.submit(ListModels())
    await run.rec.wait_type("models")
    listed = run.rec.of("models")[-1]
    assert listed.models == [] and "vertex has no model list here" in listed.error
    assert run.rec.of("notice") == []  # no lookup error for the model switched to
    await run.close()
