"""The agent's own credentials: the environment variables that hold its API key.

The agent needs them (the SDK reads them); nothing it starts does. Commands the model
runs (``tools/bash.py``) and git under the checkpoints (``checkpoints/shadow.py``) get
an environment without them, and a settings file's ``env`` may not set them
(``settings/schema.py``). MCP servers inherit only the MCP SDK's short list of safe variables.
A key the settings' ``apiKeyHelper`` prints is never put in any environment: only the
SDK client holds it (``providers/key_helper.py``), so no command can see it either.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

#: The Anthropic API's key variables (either one makes the settings' apiKeyHelper unused).
ANTHROPIC_KEY_VARS = frozenset({"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"})
#: All of them, with Bedrock's API key. (AWS's and Google's own credentials are the
#: user's, for their tools too: commands keep them.)
CREDENTIAL_VARS = ANTHROPIC_KEY_VARS | {"AWS_BEARER_TOKEN_BEDROCK"}


def command_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment a command gets: ours, minus the agent's credentials, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if k not in CREDENTIAL_VARS}
    env.update(extra or {})
    return env
