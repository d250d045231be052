"""The shape of one settings file: every key, its type and its checks (pydantic).

A file is validated into :class:`SettingsFile` key by key (:mod:`.lenient`; not
merged: that is :class:`agent_tui.settings.LoadedSettings`): an unknown key or a value
of the wrong kind is skipped alone and worded by :mod:`.problems`.

Each key's field carries its row (:mod:`.keys`): a plain key's merge policy, or the
policy of a key with a shape of its own (:mod:`.policies`). ``permissions.defaultMode``
takes agent-tui's words and Claude Code's (:func:`.policies.resolve_mode`).
"""

# Annotations are objects, not strings: pydantic would compile each field's string when
# the class is made, and a -p turn makes these classes whether it uses them or not.
import re
from types import UnionType
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    StrictBool,
    StrictInt,
    StrictStr,
)

from agent_tui.protocol.model_base import DeferredModel
from agent_tui import containment_settings as cs
from agent_tui.credentials import CREDENTIAL_VARS
from agent_tui.permissions import InvalidRule, Rule
from agent_tui.protocol import PermissionMode, mode_choices
import agent_tui.settings.policies as p
from agent_tui.settings.keys import Key, Merge
from agent_tui.settings.merged import HooksSource as HooksSource  # its home before
from agent_tui.settings.policies import resolve_mode as resolve_mode  # its home before

#: Variables ``env`` may not set: the agent's own credentials (``CREDENTIAL_VARS``, kept
#: from commands on purpose) and the tags the process layer uses to find its runs.
RESERVED_ENV_PREFIX = "AGENT_TUI_"
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


# -- the file's shape ---------------------------------------------------------------


def _check_rule(text: str) -> str:
    try:
        rule = Rule.parse(text)
    except InvalidRule as exc:
        raise ValueError(str(exc)) from None
    if not rule.specifier_can_match:
        name = text.strip().partition("(")[0].strip()
        raise ValueError(
            f"permission rule {text!r} never matches: {name} calls have nothing for "
            f"({rule.specifier}) to match; write just {name} to match every call")
    return text


def _check_mode(value: str) -> str:
    try:
        PermissionMode.parse(value)
    except ValueError:
        raise ValueError(f"unknown mode {value!r}: use one of {mode_choices()}") from None
    return value


def _check_non_empty(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be empty")
    return value


def _check_env_name(name: str) -> str:
    if not _ENV_NAME.fullmatch(name):
        raise ValueError(f"{name!r} is not a valid environment variable name")
    if name in CREDENTIAL_VARS:
        raise ValueError(f"{name} cannot be set here: the agent's credentials never go to commands")
    if name.startswith(RESERVED_ENV_PREFIX):
        raise ValueError(f"{name} cannot be set here: AGENT_TUI_* variables are agent-tui's own")
    return name


def _check_env_value(value: str) -> str:
    if "\0" in value:
        raise ValueError("an environment value cannot hold a NUL character")
    return value


RuleText = Annotated[StrictStr, AfterValidator(_check_rule)]
ModeName = Annotated[StrictStr, AfterValidator(_check_mode)]
NonEmpty = Annotated[StrictStr, AfterValidator(_check_non_empty)]
EnvName = Annotated[StrictStr, AfterValidator(_check_env_name)]
EnvValue = Annotated[StrictStr, AfterValidator(_check_env_value)]


class PermissionsSection(DeferredModel):
    model_config = ConfigDict(extra="forbid")

    allow: Annotated[list[RuleText], p.ALLOW] = Field(default_factory=list)
    ask: Annotated[list[RuleText], p.ASK] = Field(default_factory=list)
    deny: Annotated[list[RuleText], p.DENY] = Field(default_factory=list)
    default_mode: Annotated[ModeName | None, p.DEFAULT_MODE] = Field(
        default=None, alias="defaultMode")
    # Claude Code's switch that turns bypassPermissions (agent-tui's auto) off
    disable_bypass: Annotated[Literal["disable"] | None, Key(Merge.RESTRICTION)] = Field(
        default=None, alias="disableBypassPermissionsMode")
    # folders the file tools may also use (as --add-dir); only from the user's files
    additional_directories: Annotated[list[NonEmpty], Key(
        Merge.UNION, withheld=True, refusal=(
            "is only taken from your user settings or the command line (--add-dir): a "
            "project cannot widen where the agent may write"))] = Field(
        default_factory=list, alias="additionalDirectories")


class PriceEntry(DeferredModel):
    """A model's price in USD per million tokens (core/usage/pricing.py)."""

    model_config = ConfigDict(extra="forbid")

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cache_write: float = Field(ge=0)
    cache_read: float = Field(ge=0)


class WebFetchSection(DeferredModel):
    model_config = ConfigDict(extra="forbid")

    allow_private: StrictBool = Field(default=False, alias="allowPrivate")


class WebSearchSection(DeferredModel):
    model_config = ConfigDict(extra="forbid")

    # Offer the web_search tool (the API's server-side search, billed per search).
    enabled: StrictBool = False


class Keys(DeferredModel):
    """The plain keys: one row each, its merge policy beside its type (:mod:`.keys`).

    A settings file has these fields and so do the merged settings; adding a plain key
    is adding its row here (and reading it where it is used)."""

    model: Annotated[NonEmpty | None, Key(Merge.OVERRIDE)] = None
    theme: Annotated[NonEmpty | None, Key(Merge.OVERRIDE)] = None
    # The model's window when the Models API cannot say (core/usage/limits.py).
    context_window: Annotated[StrictInt | None, Key(Merge.OVERRIDE)] = Field(
        default=None, alias="contextWindow", ge=1024)
    # off | adaptive | auto | a budget (merged as text)
    thinking: Annotated[StrictStr | StrictInt | None, Key(Merge.OVERRIDE, convert=str)] = None
    effort: Annotated[Literal["low", "medium", "high", "xhigh", "max"] | None,
                      Key(Merge.OVERRIDE)] = None
    # the most a run may spend (USD); the smallest cap of all files holds
    max_budget_usd: Annotated[float | None, Key(Merge.LOWEST)] = Field(
        default=None, alias="maxBudgetUsd", gt=0, allow_inf_nan=False)
    # Claude Code's: a command that prints the API key (taken from the user's files only)
    api_key_helper: Annotated[NonEmpty | None, Key(Merge.OVERRIDE, withheld=True, refusal=(
        "is only taken from your user settings or --settings: a project's file could run "
        "a command of its choosing at startup"))] = Field(default=None, alias="apiKeyHelper")
    # Claude Code's: the output style's name, and the input's editing mode
    output_style: Annotated[NonEmpty | None, Key(Merge.OVERRIDE)] = Field(
        default=None, alias="outputStyle")
    editor_mode: Annotated[Literal["normal", "vim"] | None, Key(Merge.OVERRIDE)] = Field(
        default=None, alias="editorMode")


class Sections(DeferredModel):
    """The keys with a shape of their own that a file merges and withholds before its
    plain keys (:class:`SettingsFile`'s fields are these, then :class:`Keys`', then its
    own: the order of the notices)."""

    model_config = ConfigDict(extra="forbid")

    permissions: PermissionsSection = Field(default_factory=PermissionsSection)
    env: Annotated[dict[EnvName, EnvValue], p.ENV] = Field(default_factory=dict)
    limits: Annotated[cs.LimitsSection, p.LIMITS] = Field(default_factory=cs.LimitsSection)
    sandbox: Annotated[cs.SandboxSection, p.SANDBOX] = Field(default_factory=cs.SandboxSection)
    prices: Annotated[dict[NonEmpty, PriceEntry], p.PRICES] = Field(
        default_factory=dict)  # USD per MTok
    # custom providers and changes to presets (providers/config.py), entry by entry
    providers: Annotated[Any, p.PROVIDERS] = None
    hooks: Annotated[Any, p.HOOKS] = None  # parsed by hooks, entry by entry


class SettingsFile(Keys, Sections):
    """One settings file, as written (validated, not merged): each key's field carries
    its row, and files merge row by row in field order (:mod:`.keys`)."""

    model_config = ConfigDict(extra="forbid")

    # (line, column) of each part of ``hooks``, by its path below the ``hooks`` key
    _hooks_where: dict[tuple[Any, ...], tuple[int, int]] = PrivateAttr(default_factory=dict)
    # Claude Code's answer about the project's .mcp.json servers (the user's files only)
    enable_all_project_mcp_servers: Annotated[StrictBool | None, p.APPROVE_ALL] = Field(
        default=None, alias="enableAllProjectMcpServers")
    enabled_mcpjson_servers: Annotated[list[NonEmpty], p.APPROVE] = Field(
        default_factory=list, alias="enabledMcpjsonServers")
    disabled_mcpjson_servers: Annotated[list[NonEmpty], p.REJECT] = Field(
        default_factory=list, alias="disabledMcpjsonServers")
    # hooks/status_line.py (the user's only)
    status_line: Annotated[Any, p.STATUS_LINE] = Field(default=None, alias="statusLine")
    web_fetch: Annotated[WebFetchSection | None, p.WEB_FETCH] = Field(
        default=None, alias="webFetch")
    web_search: Annotated[WebSearchSection | None, p.WEB_SEARCH] = Field(
        default=None, alias="webSearch")
    # Claude Code's plugins, read by plugins/ (the user's file enables; a project's offers)
    enabled_plugins: Annotated[Any, p.READ_ELSEWHERE] = Field(
        default=None, alias="enabledPlugins")
    extra_known_marketplaces: Annotated[Any, p.READ_ELSEWHERE] = Field(
        default=None, alias="extraKnownMarketplaces")
    schema_url: Annotated[StrictStr | None, p.READ_ELSEWHERE] = Field(
        default=None, alias="$schema")  # for editors; unused


def known_keys(model: type[BaseModel], at: tuple[str, ...] = ()) -> dict[tuple[str, ...], list[str]]:
    """The keys a person may write, per object, read off the model and the section
    models its fields hold (a field is the one place a key is named)."""
    found = {at: [field.alias or name for name, field in model.model_fields.items()]}
    for name, field in model.model_fields.items():
        given = field.annotation
        for inner in get_args(given) if get_origin(given) in (Union, UnionType) else (given,):
            if isinstance(inner, type) and issubclass(inner, BaseModel):  # a section
                found.update(known_keys(inner, (*at, field.alias or name)))
    return found


#: The keys a person may write, per object (for "did you mean" hints).
KNOWN_KEYS: dict[tuple[str, ...], list[str]] = known_keys(SettingsFile)
