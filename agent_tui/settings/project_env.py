"""Which ``env`` names a project's settings file may set, trusted or not.

A project's ``env`` goes to the commands the agent runs. A name that decides what
code runs (``PATH``, ``BASH_ENV``, ``LD_PRELOAD``, ``GIT_CONFIG_*``, ``HOME``,
``PYTHONPATH``, ``NODE_OPTIONS``, ``PYTEST_ADDOPTS``, ``GOFLAGS``...) would let the
repository run its own code under any approved command, and in the user's hooks.
A denylist always misses one, so this is an allowlist: names that only tune output,
locale or a program's mode, none of which loads a file or a module of the project's
choosing. Every other name is refused with a notice (the user's own files may set it).
"""

from __future__ import annotations

import re

#: Exact names a project may set.
ALLOWED_NAMES = frozenset({
    # locale, time, terminal looks
    "LANG", "LANGUAGE", "TZ", "NO_COLOR", "FORCE_COLOR", "CLICOLOR", "CLICOLOR_FORCE",
    "COLUMNS", "LINES", "CI", "DEBUG", "VERBOSE", "LOG_LEVEL", "LOGLEVEL",
    # Python's harmless switches (not PYTHONPATH, PYTHONSTARTUP, PYTHONWARNINGS, which
    # import modules)
    "PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED", "PYTHONIOENCODING", "PYTHONHASHSEED",
    "PYTHONUTF8", "PYTHONFAULTHANDLER", "PIP_DISABLE_PIP_VERSION_CHECK", "PIP_NO_INPUT",
    # the mode of a framework, never a path
    "NODE_ENV", "RAILS_ENV", "RACK_ENV", "APP_ENV", "FLASK_DEBUG", "MIX_ENV",
    "NODE_NO_WARNINGS", "NPM_CONFIG_FUND", "NPM_CONFIG_AUDIT", "NPM_CONFIG_UPDATE_NOTIFIER",
    "NEXT_TELEMETRY_DISABLED", "DO_NOT_TRACK", "DISABLE_TELEMETRY", "DOTNET_CLI_TELEMETRY_OPTOUT",
    "RUST_BACKTRACE", "RUST_LOG", "CARGO_TERM_COLOR", "CARGO_INCREMENTAL", "GIT_TERMINAL_PROMPT",
    # Claude Code's tuning of its own tools (commands do not read them)
    "BASH_DEFAULT_TIMEOUT_MS", "BASH_MAX_TIMEOUT_MS", "BASH_MAX_OUTPUT_LENGTH",
    "MAX_THINKING_TOKENS", "MAX_MCP_OUTPUT_TOKENS", "MCP_TIMEOUT", "MCP_TOOL_TIMEOUT",
    "DISABLE_AUTOUPDATER", "DISABLE_ERROR_REPORTING", "DISABLE_NON_ESSENTIAL_MODEL_CALLS",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "CLAUDE_CODE_MAX_OUTPUT_TOKENS",
    "CLAUDE_CODE_ENABLE_TELEMETRY", "CLAUDE_BASH_MAINTAIN_PROJECT_WORKING_DIR",
})

#: Name shapes a project may set: the locale categories (``LC_ALL``, ``LC_CTYPE``...).
_ALLOWED_SHAPES = re.compile(r"LC_[A-Z]+")


def project_may_set(name: str) -> bool:
    """Whether a project's ``env`` may set ``name``."""
    return name in ALLOWED_NAMES or _ALLOWED_SHAPES.fullmatch(name) is not None


#: Names a project's ``.mcp.json`` may expand with ``${...}`` besides those above: where
#: things are and who runs them, never a secret. Any other name (an API key, a token)
#: expands only in the user's own MCP config.
EXPANDABLE_NAMES = frozenset({"HOME", "USER", "LOGNAME", "PATH", "SHELL", "TMPDIR", "PWD",
                              "TERM", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME"})


def project_may_expand(name: str) -> bool:
    """Whether a project's ``.mcp.json`` may expand ``${name}``."""
    return name in EXPANDABLE_NAMES or project_may_set(name)


def refused_message(names: list[str]) -> str:
    """The notice for a project file's refused names (one per file)."""
    listed = ", ".join(names)
    return (f"env {listed}: not taken from a project's file, which may set only names that "
            "cannot change what code runs (a locale, a colour switch, a framework's mode...); "
            "set them in your user settings if you want them (ignored)")
