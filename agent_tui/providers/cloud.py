"""Claude on Amazon Bedrock and on Google Vertex AI, through the SDK's own clients.

Each is the anthropic provider (:mod:`agent_tui.providers.anthropic`: streaming, the
cancel that closes the stream, the error mapping) with the SDK's
``AsyncAnthropicBedrock`` or ``AsyncAnthropicVertex`` as its client, set up from
:mod:`agent_tui.providers.cloud_setup`. The request body is the Messages API's; the SDK
moves the model into the path (Bedrock's ``/model/{id}/invoke-with-response-stream``,
Vertex's ``.../models/{id}:streamRawPredict``) and signs or authorizes it (SigV4, a
Bedrock API key, a Google access token it refreshes). Each body names the cloud's
``anthropic_version``, which those services require.

Neither cloud has the Models API: :meth:`model_info` says nothing (the built-in limits
apply, and no lookup fails), :meth:`list_models` says how to choose a model instead. Model ids are the
cloud's: ``us.anthropic.claude-sonnet-4-5-20250929-v1:0`` on Bedrock,
``claude-sonnet-4-5@20250929`` on Vertex.
"""

from __future__ import annotations

from typing import Any, cast

import httpx2
import anthropic
from anthropic.lib.bedrock import AsyncAnthropicBedrock
from anthropic.lib.vertex import AsyncAnthropicVertex

from agent_tui.providers import base
from agent_tui.providers.anthropic import AnthropicProvider, open_telemetry
from agent_tui.providers.cloud_setup import BedrockAuth, BedrockSetup, VertexSetup

# Claude Code's default models on each cloud (and its aliases' ids there, below).
BEDROCK_DEFAULT_MODEL = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
VERTEX_DEFAULT_MODEL = "claude-sonnet-4-5@20250929"
BEDROCK_VERSION = "bedrock-2023-05-31"
VERTEX_VERSION = "vertex-2023-10-16"


class _UnsignedBedrock(AsyncAnthropicBedrock):
    """CLAUDE_CODE_SKIP_BEDROCK_AUTH: requests go out unsigned (a gateway signs)."""

    async def _prepare_request(self, request: httpx2.Request) -> None:
        return None


class _UnauthorizedVertex(AsyncAnthropicVertex):
    """CLAUDE_CODE_SKIP_VERTEX_AUTH: no Google token (a gateway adds its own)."""

    async def _prepare_request(self, request: httpx2.Request) -> None:
        return None


class _NoModelsAPI:
    """The clouds have no Models API: nothing to look up (the built-in limits apply), and
    a list asked for is one line saying how to choose instead (``/model`` shows it)."""

    name: str
    default_model: str

    async def model_info(self, model: str) -> base.ModelInfo | None:
        return None

    async def list_models(self) -> list[base.ModelInfo]:
        raise base.ProviderError(
            f"{self.name} has no model list here: give the model's id, /model ID (for example "
            f"{self.default_model})", retryable=False)


def _aws_errors() -> tuple[type[BaseException], ...]:
    from botocore.exceptions import BotoCoreError

    return (BotoCoreError,)


class BedrockProvider(_NoModelsAPI, AnthropicProvider):
    name = "bedrock"
    default_model = BEDROCK_DEFAULT_MODEL
    model_aliases = {"sonnet": BEDROCK_DEFAULT_MODEL,
                     "opus": "us.anthropic.claude-opus-4-6-v1",
                     "haiku": "us.anthropic.claude-haiku-4-5-20251001-v1:0"}
    body_extras = {"anthropic_version": BEDROCK_VERSION}
    hints = {
        401: "AWS refused the credentials: check AWS_PROFILE, AWS_ACCESS_KEY_ID or "
             "AWS_BEARER_TOKEN_BEDROCK",
        403: "AWS refused the request: check the credentials, and that they may call "
             "bedrock:InvokeModelWithResponseStream for this model",
        404: "not found: check the model id (Bedrock's look like "
             "us.anthropic.claude-sonnet-4-5-20250929-v1:0) and that it is enabled in the region",
    }

    def __init__(self, setup: BedrockSetup, *, timeout: float = 600.0) -> None:
        self.setup = setup
        self.auth_errors = _aws_errors()
        kind = _UnsignedBedrock if setup.auth is BedrockAuth.NONE else AsyncAnthropicBedrock
        client = kind(aws_region=setup.region, base_url=setup.base_url, max_retries=0,
                      timeout=timeout, api_key=setup.bearer_token, open_telemetry=open_telemetry())
        # Not an AsyncAnthropic subclass, but the same Messages API over its own transport.
        super().__init__(client=cast(anthropic.AsyncAnthropic, client))

    def _auth_failure(self, exc: BaseException) -> base.ProviderError:
        return base.ProviderError(f"the AWS credentials could not be used: {exc}",
                                  retryable=False, kind=base.ErrorKind.AUTHENTICATION)


class VertexProvider(_NoModelsAPI, AnthropicProvider):
    name = "vertex"
    default_model = VERTEX_DEFAULT_MODEL
    model_aliases = {"sonnet": VERTEX_DEFAULT_MODEL, "opus": "claude-opus-4-6",
                     "haiku": "claude-haiku-4-5@20251001"}
    body_extras = {"anthropic_version": VERTEX_VERSION}
    hints = {
        401: "Google Cloud refused the credentials: gcloud auth application-default login, "
             "or check GOOGLE_APPLICATION_CREDENTIALS",
        403: "the account may not use this model: check its role (aiplatform.endpoints."
             "predict) and that the model is enabled in Model Garden",
        404: "not found: check the model id (Vertex's look like claude-sonnet-4-5@20250929), "
             "the project, and that the region offers it (CLOUD_ML_REGION, VERTEX_REGION_*)",
    }

    def __init__(self, setup: VertexSetup, *, timeout: float = 600.0) -> None:
        self.setup = setup
        self._timeout = timeout
        if not setup.skip_auth:
            import google.auth.exceptions

            self.auth_errors = (google.auth.exceptions.GoogleAuthError,)
        # Not an AsyncAnthropic subclass, but the same Messages API over its own transport.
        super().__init__(client=cast(anthropic.AsyncAnthropic, self._new_client(setup.region)))
        self._regional: dict[str, Any] = {setup.region: self._client}

    def _new_client(self, region: str) -> AsyncAnthropicVertex:
        kind = _UnauthorizedVertex if self.setup.skip_auth else AsyncAnthropicVertex
        return kind(region=region, project_id=self.setup.project,
                    credentials=self.setup.credentials, base_url=self.setup.base_url,
                    max_retries=0, timeout=self._timeout, open_telemetry=open_telemetry())

    def _client_for(self, client: Any, model: str) -> Any:
        region = self.setup.region_for(model)
        if region not in self._regional:  # a VERTEX_REGION_* variable: that region's endpoint
            self._regional[region] = self._new_client(region)
        return self._regional[region]

    def _auth_failure(self, exc: BaseException) -> base.ProviderError:
        import google.auth.exceptions

        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        if isinstance(exc, google.auth.exceptions.TransportError):
            return base.ProviderError(f"no answer from Google's token service: {first}",
                                      retryable=True, kind=base.ErrorKind.CONNECTION)
        return base.ProviderError(f"Google Cloud refused the credentials: {first}",
                                  retryable=False, kind=base.ErrorKind.AUTHENTICATION)

    async def aclose(self) -> None:
        for client in self._regional.values():
            await client.close()
