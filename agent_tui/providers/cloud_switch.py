"""Claude Code's switches for a cloud account, read without loading the setup.

The command line asks these before the first frame (:func:`chosen_cloud` picks the
provider), so this module imports nothing heavy; :mod:`agent_tui.providers.cloud_setup`
reads and checks the rest of the variables, and the credentials, once a cloud is chosen.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from enum import StrEnum

TRUTHY = frozenset({"1", "true", "yes", "on"})
FALSY = frozenset({"", "0", "false", "no", "off"})
#: Claude Code's per-model Vertex region variables: model id prefix, variable. The
#: longest prefix that a model id starts with names its variable.
VERTEX_REGION_VARS: tuple[tuple[str, str], ...] = (
    ("claude-3-5-haiku", "VERTEX_REGION_CLAUDE_3_5_HAIKU"),
    ("claude-3-5-sonnet", "VERTEX_REGION_CLAUDE_3_5_SONNET"),
    ("claude-3-7-sonnet", "VERTEX_REGION_CLAUDE_3_7_SONNET"),
    ("claude-haiku-4-5", "VERTEX_REGION_CLAUDE_HAIKU_4_5"),
    ("claude-opus-4", "VERTEX_REGION_CLAUDE_4_0_OPUS"),
    ("claude-opus-4-1", "VERTEX_REGION_CLAUDE_4_1_OPUS"),
    ("claude-opus-4-5", "VERTEX_REGION_CLAUDE_4_5_OPUS"),
    ("claude-opus-4-6", "VERTEX_REGION_CLAUDE_4_6_OPUS"),
    ("claude-sonnet-4", "VERTEX_REGION_CLAUDE_4_0_SONNET"),
    ("claude-sonnet-4-5", "VERTEX_REGION_CLAUDE_4_5_SONNET"),
    ("claude-sonnet-4-6", "VERTEX_REGION_CLAUDE_4_6_SONNET"),
)

#: Every variable :mod:`agent_tui.providers.cloud_setup` reads: what may choose and
#: set up a cloud account.
CLOUD_VARS = frozenset({
    "CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "CLAUDE_CODE_SKIP_BEDROCK_AUTH",
    "CLAUDE_CODE_SKIP_VERTEX_AUTH", "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE",
    "ANTHROPIC_BEDROCK_BASE_URL", "ANTHROPIC_VERTEX_BASE_URL", "ANTHROPIC_VERTEX_PROJECT_ID",
    "CLOUD_ML_REGION", "GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_CLOUD_PROJECT", "GCLOUD_PROJECT",
    *(var for _, var in VERTEX_REGION_VARS),
})


class CloudSetupError(Exception):
    """The cloud account cannot be used as set up: one line, naming the variable."""


class Cloud(StrEnum):
    BEDROCK = "bedrock"
    VERTEX = "vertex"


def flag(name: str, environ: Mapping[str, str] | None = None) -> bool:
    """A switch as Claude Code reads it (1/true/yes/on, 0/false/no/off); another value
    is an error rather than a guess."""
    value = (os.environ if environ is None else environ).get(name)
    if value is None:
        return False
    word = value.strip().lower()
    if word in TRUTHY:
        return True
    if word in FALSY:
        return False
    raise CloudSetupError(f"{name}={value}: give 1 (on) or 0 (off)")


def chosen_cloud(environ: Mapping[str, str] | None = None) -> Cloud | None:
    """The cloud Claude Code's switches choose (None: neither is on)."""
    bedrock = flag("CLAUDE_CODE_USE_BEDROCK", environ)
    vertex = flag("CLAUDE_CODE_USE_VERTEX", environ)
    if bedrock and vertex:
        raise CloudSetupError("CLAUDE_CODE_USE_BEDROCK and CLAUDE_CODE_USE_VERTEX are both on: "
                              "turn one off, or choose with --provider bedrock|vertex")
    return Cloud.BEDROCK if bedrock else Cloud.VERTEX if vertex else None
