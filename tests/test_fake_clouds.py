"""The clouds' fakes against the SDK's own Bedrock and Vertex clients: their routes, what
they refuse as the services refuse it, and the non-streaming endpoints."""

from __future__ import annotations

import base64
import json
import struct
import urllib.error
import urllib.request
import zlib

import anthropic
import pytest
from anthropic.lib.bedrock import AnthropicBedrock
from anthropic.lib.vertex import AnthropicVertex

from tests.fake_api import Reply
from tests.fake_api.aws_wire import event_frame
from tests.fake_api.bedrock import FakeBedrockServer
from tests.fake_api.vertex import FakeVertexServer

BEDROCK_MODEL = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
VERTEX_MODEL = "claude-sonnet-4-5@20250929"
MESSAGES = [{"role": "user", "content": "hi"}]


@pytest.fixture
def bedrock():
    with FakeBedrockServer(credentials={"AKIATEMP": "temp-secret", "AKIALONG": "long-secret"},
                           session_tokens={"AKIATEMP": "the-session-token"}) as srv:
        yield srv
    assert srv.errors == []


def bedrock_client(srv, key="AKIALONG", secret="long-secret", token=None, region="us-east-1"):
    return AnthropicBedrock(aws_access_key=key, aws_secret_key=secret, aws_session_token=token,
                            aws_region=region, base_url=srv.url, max_retries=0, timeout=10)


def test_bedrock_invoke_answers_json_and_temporary_keys_need_their_session_token(bedrock):
    bedrock.enqueue(Reply.text("whole"), Reply.text("again"))
    extra = {"anthropic_version": "bedrock-2023-05-31"}
    message = bedrock_client(bedrock).messages.create(
        model=BEDROCK_MODEL, max_tokens=50, messages=MESSAGES, extra_body=extra)
    assert message.content[0].text == "whole"
    with pytest.raises(anthropic.PermissionDeniedError, match="security token included"):
        bedrock_client(bedrock, "AKIATEMP", "temp-secret").messages.create(
            model=BEDROCK_MODEL, max_tokens=50, messages=MESSAGES, extra_body=extra)
    message = bedrock_client(bedrock, "AKIATEMP", "temp-secret", "the-session-token").messages.create(
        model=BEDROCK_MODEL, max_tokens=50, messages=MESSAGES, extra_body=extra)
    assert message.content[0].text == "again"
    assert bedrock.signed == ["AKIALONG", "AKIATEMP"]


def test_bedrock_refuses_another_region_an_unknown_model_and_the_api_version(bedrock):
    extra = {"anthropic_version": "bedrock-2023-05-31"}
    with pytest.raises(anthropic.PermissionDeniedError, match="scoped to a valid region"):
        bedrock_client(bedrock, region="eu-west-1").messages.create(
            model=BEDROCK_MODEL, max_tokens=50, messages=MESSAGES, extra_body=extra)
    client = bedrock_client(bedrock)
    with pytest.raises(anthropic.BadRequestError, match="model identifier is invalid"):
        client.messages.create(model="anthropic.claude-nope-v1:0", max_tokens=50,
                               messages=MESSAGES, extra_body=extra)
    with pytest.raises(anthropic.BadRequestError, match="anthropic_version"):
        client.messages.create(model=BEDROCK_MODEL, max_tokens=50, messages=MESSAGES)
    assert bedrock.usage == []  # nothing reached the model


def test_vertex_raw_predict_answers_json_and_refuses_a_model_in_the_body(tmp_path, monkeypatch):
    with FakeVertexServer() as srv:
        monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS",
                           str(srv.write_service_account(tmp_path / "key.json")))
        srv.enqueue(Reply.text("whole"))
        client = AnthropicVertex(region="us-east5", project_id="test-project",
                                 base_url=srv.base_url, max_retries=0, timeout=10)
        extra = {"anthropic_version": "vertex-2023-10-16"}
        message = client.messages.create(model=VERTEX_MODEL, max_tokens=50, messages=MESSAGES,
                                         extra_body=extra)
        assert message.content[0].text == "whole"
        assert srv.routes[-1] == ("test-project", "us-east5", VERTEX_MODEL, "rawPredict")
        # the SDK never sends one: a body as a hand-written client would
        url = (f"{srv.base_url}/projects/test-project/locations/us-east5/publishers/anthropic/"
               f"models/{VERTEX_MODEL}:rawPredict")
        body = {**extra, "model": VERTEX_MODEL, "max_tokens": 50, "messages": MESSAGES}
        request = urllib.request.Request(url, json.dumps(body).encode(), method="POST", headers={
            "Authorization": f"Bearer {srv.issue_token()}", "Content-Type": "application/json"})
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.build_opener(urllib.request.ProxyHandler({})).open(request, timeout=10)
        assert refused.value.code == 400 and b"model: Extra inputs" in refused.value.read()
        with pytest.raises(anthropic.NotFoundError, match="Publisher Model"):
            client.messages.create(model="claude-nope@1", max_tokens=50, messages=MESSAGES,
                                   extra_body=extra)
        srv.revoke_tokens()  # the token the client holds is no longer good
        with pytest.raises(anthropic.AuthenticationError, match="invalid authentication"):
            client.messages.create(model=VERTEX_MODEL, max_tokens=50, messages=MESSAGES,
                                   extra_body=extra)
        assert srv.token_requests == 1 and len(srv.usage) == 1
        assert srv.errors == []


def test_event_stream_frames_hold_base64_chunks():
    """The fake's framing, read back by hand: prelude, CRCs, headers, base64 payload."""
    frame = event_frame({":event-type": "chunk", ":message-type": "event"},
                        json.dumps({"bytes": base64.b64encode(b'{"type":"ping"}').decode()}).encode())
    total, headers_len = struct.unpack(">II", frame[:8])
    assert total == len(frame) and struct.unpack(">I", frame[8:12])[0] == zlib.crc32(frame[:8])
    assert struct.unpack(">I", frame[-4:])[0] == zlib.crc32(frame[:-4])
    payload = json.loads(frame[12 + headers_len:-4])
    assert base64.b64decode(payload["bytes"]) == b'{"type":"ping"}'
