"""Which cloud account the agent talks to: Claude Code's variables, read and checked.

Amazon Bedrock (``--provider bedrock``, or ``CLAUDE_CODE_USE_BEDROCK=1``):

- the region: ``AWS_REGION``, else ``AWS_DEFAULT_REGION``, else the AWS profile's;
- the credentials: AWS's own chain (``AWS_ACCESS_KEY_ID`` / ``AWS_SECRET_ACCESS_KEY`` /
  ``AWS_SESSION_TOKEN``, ``AWS_PROFILE``, ``~/.aws``, SSO), which signs each request
  (SigV4); or ``AWS_BEARER_TOKEN_BEDROCK``, a Bedrock API key; or none at all with
  ``CLAUDE_CODE_SKIP_BEDROCK_AUTH=1`` (a gateway in between signs);
- ``ANTHROPIC_BEDROCK_BASE_URL``: another endpoint (a gateway, a private link).

Google Vertex AI (``--provider vertex``, or ``CLAUDE_CODE_USE_VERTEX=1``):

- the region: ``CLOUD_ML_REGION`` (``global``, ``us-east5``, ...), and per model the
  ``VERTEX_REGION_CLAUDE_*`` variable of Claude Code's table below;
- the project: ``ANTHROPIC_VERTEX_PROJECT_ID``, else the one Google's credentials name
  (``GOOGLE_CLOUD_PROJECT``, ``GCLOUD_PROJECT``, the key file's);
- the credentials: Google's application default credentials (``gcloud auth
  application-default login``, ``GOOGLE_APPLICATION_CREDENTIALS``, a cloud machine's
  account); none with ``CLAUDE_CODE_SKIP_VERTEX_AUTH=1``;
- ``ANTHROPIC_VERTEX_BASE_URL``: another endpoint.

What is missing or malformed is a :class:`CloudSetupError`: one line that names the
variable (:mod:`agent_tui.providers.cloud_switch` has the switches, read before the
first frame). Nothing here sends a request to the model; finding the credentials reads
files (and, for an AWS SSO profile or a cloud machine, may ask their services).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict

from agent_tui.providers.cloud_switch import VERTEX_REGION_VARS, CloudSetupError, flag

GOOGLE_SCOPE = "https://www.googleapis.com/auth/cloud-platform"
_AWS_REGION = re.compile(r"[a-z]{2}(-[a-z]+)+-\d{1,2}")
_GOOGLE_REGION = re.compile(r"global|us|eu|[a-z]+-[a-z]+\d{1,2}")
_PROJECT = re.compile(r"[A-Za-z0-9][A-Za-z0-9.:_-]*")


class BedrockAuth(StrEnum):
    SIGV4 = "sigv4"  # AWS's credential chain signs each request
    BEARER = "bearer"  # AWS_BEARER_TOKEN_BEDROCK
    NONE = "none"  # CLAUDE_CODE_SKIP_BEDROCK_AUTH: a gateway signs


class BedrockSetup(BaseModel):
    region: str
    auth: BedrockAuth
    base_url: str | None = None
    bearer_token: str | None = None

    def __repr__(self) -> str:  # the token is a key: never in a repr, a log, a traceback
        return f"BedrockSetup(region={self.region!r}, auth={self.auth!s})"

    __str__ = __repr__


class VertexSetup(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    region: str
    project: str
    base_url: str | None = None
    skip_auth: bool = False
    #: model id prefix -> region, from the VERTEX_REGION_CLAUDE_* variables set
    region_overrides: dict[str, str] = {}
    credentials: Any = None  # google.auth's credentials (None: skip_auth)

    def region_for(self, model: str) -> str:
        """The region a request for ``model`` goes to (``claude-x@date`` or ``claude-x``)."""
        name = model.partition("@")[0]
        best = max((p for p in self.region_overrides if name.startswith(p)), key=len, default=None)
        return self.region_overrides[best] if best is not None else self.region


def _url(name: str, environ: Mapping[str, str]) -> str | None:
    value = environ.get(name)
    if value is None or not value.strip():
        return None
    value = value.strip()
    if not re.match(r"https?://[^/\s]+", value):
        raise CloudSetupError(f"{name}={value}: not an http:// or https:// address")
    return value


def bedrock_setup(environ: Mapping[str, str] | None = None) -> BedrockSetup:
    env = os.environ if environ is None else environ
    skip = flag("CLAUDE_CODE_SKIP_BEDROCK_AUTH", env)
    base_url = _url("ANTHROPIC_BEDROCK_BASE_URL", env)
    region_var = next((v for v in ("AWS_REGION", "AWS_DEFAULT_REGION") if env.get(v, "").strip()),
                      None)
    region = env[region_var].strip() if region_var else _profile_region(env)
    if not region:
        raise CloudSetupError("bedrock: no AWS region: set AWS_REGION (for example us-east-1), "
                              "or a region in your AWS profile")
    if not _AWS_REGION.fullmatch(region):
        raise CloudSetupError(f"{region_var or 'the AWS profile region'}={region}: not an AWS "
                              "region (like us-east-1)")
    token = env.get("AWS_BEARER_TOKEN_BEDROCK")
    if skip:
        return BedrockSetup(region=region, auth=BedrockAuth.NONE, base_url=base_url)
    if token is not None:
        if not token.strip():
            raise CloudSetupError("AWS_BEARER_TOKEN_BEDROCK is empty: give the Bedrock API key, "
                                  "or unset it to sign with your AWS credentials")
        return BedrockSetup(region=region, auth=BedrockAuth.BEARER, base_url=base_url,
                            bearer_token=token.strip())
    _check_aws_credentials(env)
    return BedrockSetup(region=region, auth=BedrockAuth.SIGV4, base_url=base_url)


def _aws_session(env: Mapping[str, str]) -> Any:
    try:
        import boto3
        import botocore.exceptions
    except ImportError:
        raise CloudSetupError("bedrock needs boto3 (make setup installs it)") from None
    try:
        return boto3.Session(profile_name=env.get("AWS_PROFILE") or None)
    except botocore.exceptions.ProfileNotFound:
        raise CloudSetupError(f"AWS_PROFILE={env.get('AWS_PROFILE')}: no such profile in the "
                              "AWS config files (aws configure --profile NAME)") from None


def _profile_region(env: Mapping[str, str]) -> str | None:
    region: str | None = _aws_session(env).region_name
    return region


def _check_aws_credentials(env: Mapping[str, str]) -> None:
    session = _aws_session(env)  # first: it says so when boto3 is missing
    import botocore.exceptions

    try:
        credentials = session.get_credentials()
    except botocore.exceptions.BotoCoreError as exc:
        raise CloudSetupError(f"bedrock: the AWS credentials cannot be read: {exc}") from None
    if credentials is None:
        raise CloudSetupError(
            "bedrock: no AWS credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or "
            "AWS_PROFILE (aws configure, aws sso login), or AWS_BEARER_TOKEN_BEDROCK")


def vertex_setup(environ: Mapping[str, str] | None = None) -> VertexSetup:
    env = os.environ if environ is None else environ
    region = env.get("CLOUD_ML_REGION", "").strip()
    if not region:
        raise CloudSetupError("vertex: no region: set CLOUD_ML_REGION (for example global or "
                              "us-east5)")
    _check_google_region("CLOUD_ML_REGION", region)
    overrides: dict[str, str] = {}
    for prefix, var in VERTEX_REGION_VARS:
        value = env.get(var, "").strip()
        if value:
            _check_google_region(var, value)
            overrides[prefix] = value
    base_url = _url("ANTHROPIC_VERTEX_BASE_URL", env)
    skip = flag("CLAUDE_CODE_SKIP_VERTEX_AUTH", env)
    project = env.get("ANTHROPIC_VERTEX_PROJECT_ID", "").strip() or None
    credentials = None
    if skip:
        project = project or env.get("GOOGLE_CLOUD_PROJECT") or env.get("GCLOUD_PROJECT")
    else:
        credentials, found = _google_credentials()
        project = project or found
    if not project:
        raise CloudSetupError("vertex: no Google Cloud project: set ANTHROPIC_VERTEX_PROJECT_ID")
    if not _PROJECT.fullmatch(project):
        raise CloudSetupError(f"vertex: {project!r} is not a Google Cloud project id")
    return VertexSetup(region=region, project=project, base_url=base_url, skip_auth=skip,
                       region_overrides=overrides, credentials=credentials)


def _check_google_region(var: str, value: str) -> None:
    if not _GOOGLE_REGION.fullmatch(value):
        raise CloudSetupError(f"{var}={value}: not a Google Cloud region (like us-east5, "
                              "europe-west1 or global)")


def _google_credentials() -> tuple[Any, str | None]:
    try:
        import google.auth
        import google.auth.exceptions
    except ImportError:
        raise CloudSetupError("vertex needs google-auth (make setup installs it)") from None
    try:
        return google.auth.default(scopes=[GOOGLE_SCOPE])
    except google.auth.exceptions.DefaultCredentialsError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        if "default credentials were not found" in first.lower():
            first = "none found"
        raise CloudSetupError(
            f"vertex: no Google Cloud credentials ({first}): run gcloud auth "
            "application-default login, or set GOOGLE_APPLICATION_CREDENTIALS to a key file"
        ) from None
