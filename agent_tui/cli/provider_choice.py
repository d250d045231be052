"""Which provider a session talks to, as the command line and the settings chose it.

The one the options name (``--provider``, or the first part of ``--model
PROVIDER/MODEL``) is made at once, so that a missing key or a bad entry stops the
start with one line; it stands behind a router that reaches every other provider by
``PROVIDER/MODEL`` (providers/router.py), for ``/model`` mid-session.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agent_tui.cli.options import Options, UsageError

if TYPE_CHECKING:
    from agent_tui.providers.base import Provider


def cloud_setup(opts: Options) -> Any:
    """The cloud account ``opts`` chose, checked (None: no cloud); UsageError, one line,
    when a variable is missing or malformed or no credentials are found."""
    if opts.provider not in ("bedrock", "vertex"):
        return None
    from agent_tui.providers.cloud_setup import bedrock_setup, vertex_setup
    from agent_tui.providers.cloud_switch import CloudSetupError

    try:
        if opts.provider == "bedrock":
            return bedrock_setup()
        if opts.provider == "vertex":
            return vertex_setup()
    except CloudSetupError as exc:
        raise UsageError(str(exc)) from None
    return None


def make_provider(opts: Options, *, key_helper: Any = None, cloud: Any = None,
                  configured: dict[str, Any] | None = None) -> Provider:
    """The session's provider: the one ``opts`` chose, behind a router that reaches
    every other by ``PROVIDER/MODEL`` (providers/router.py). ``configured``: the
    settings' ``providers`` entries."""
    from agent_tui.providers.base import ProviderError
    from agent_tui.providers.config import ProviderConfigError
    from agent_tui.providers.factory import make_configured, routed
    from agent_tui.providers.presets import BUILTIN_NAMES

    name = opts.provider
    try:
        if name in BUILTIN_NAMES and name not in (configured or {}) or key_helper is not None:
            default = _builtin_provider(name, opts, key_helper=key_helper, cloud=cloud)
        else:
            default = make_configured(name, configured)
    except (ProviderConfigError, ProviderError) as exc:
        raise UsageError(str(exc)) from None
    return routed(name, default, lambda other: _builtin_provider(other, opts), configured)


def _builtin_provider(name: str, opts: Options, *, key_helper: Any = None,
                      cloud: Any = None) -> Provider:
    """``key_helper``: the settings' apiKeyHelper (cli/key_command.py), which makes
    the provider anthropic, with the key it prints. ``cloud``: :func:`cloud_setup`'s."""
    if name in ("bedrock", "vertex"):
        from agent_tui.providers.cloud import BedrockProvider, VertexProvider

        cloud = cloud if cloud is not None else cloud_setup(opts)
        return BedrockProvider(cloud) if name == "bedrock" else VertexProvider(cloud)
    if name == "anthropic" or key_helper is not None:
        # Imported here: the SDK takes about a second to import.
        from agent_tui.providers.anthropic import AnthropicProvider

        return AnthropicProvider(key_helper=key_helper)
    from agent_tui.providers.scripted import ScriptedProvider, ScriptError, load_script

    try:
        script = load_script(opts.script)
    except ScriptError as exc:
        raise UsageError(str(exc)) from None
    return ScriptedProvider(script)


def provider_of_model(opts: Options, configured: dict[str, Any]) -> Options:
    """``--model NAME/MODEL`` where NAME is a settings entry chooses that provider."""
    import dataclasses

    head, sep, rest = (opts.model or "").partition("/")
    if opts.provider_given or not (sep and rest) or head not in configured:
        return opts
    return dataclasses.replace(opts, provider=head, provider_given=True)
