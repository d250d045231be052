"""The agent's own credentials: the environment variables that hold its API key.

The agent needs them (the SDK reads them); nothing it starts does. Commands the model
runs (``tools/bash.py``) and git under the checkpoints (``checkpoints/shadow.py``) get
an environment without them, and a settings file's ``env`` may not set them
(``settings/schema.py``). MCP servers inherit only the MCP SDK's short list of safe variables.
A key the settings' ``apiKeyHelper`` prints is never put in any environment: only the
SDK client holds it (``providers/key_helper.py``), so no command can see it either.
"""

from __future__ import annotations

CREDENTIAL_VARS = frozenset({"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"})
