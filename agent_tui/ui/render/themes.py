"""The themes: which Textual theme gives each of ours its colours, and its TCSS.

Each theme is a Textual theme (colours) plus ``themes/NAME.tcss``; every file scopes
its rules to the app class ``-agent-theme-NAME`` (Textual itself sets
``-theme-<its theme>``), so all are loaded at once and switching themes is switching
one class (and the Textual theme).
"""

from __future__ import annotations

from pathlib import Path

from textual.theme import Theme


def themes_dir() -> Path:
    """``themes/`` at the repository root (the package is installed editable)."""
    return Path(__file__).resolve().parents[3] / "themes"


HIGH_CONTRAST = Theme(
    name="agent-tui-high-contrast",
    primary="#00D7FF",
    secondary="#FFFFFF",
    accent="#FFFF00",
    warning="#FFD700",
    error="#FF5F5F",
    success="#5FFF5F",
    foreground="#FFFFFF",
    background="#000000",
    surface="#000000",
    panel="#1C1C1C",
    dark=True,
    text_alpha=1.0,
    luminosity_spread=0.0,
)

# Our theme name -> the Textual theme that gives its colours.
THEMES = {
    "dark": "textual-dark",
    "light": "textual-light",
    "high-contrast": HIGH_CONTRAST.name,
}

THEME_HELP = {
    "dark": "light text on a dark background",
    "light": "dark text on a light background",
    "high-contrast": "black and white, saturated state colours, heavy borders",
}


def theme_css_paths() -> list[Path]:
    """Every theme's TCSS file that exists."""
    return [p for p in (themes_dir() / f"{name}.tcss" for name in THEMES) if p.is_file()]


def theme_class(name: str) -> str:
    """The app class that turns on the rules of ``themes/NAME.tcss``."""
    return f"-agent-theme-{name}"
