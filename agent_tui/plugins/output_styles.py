"""The enabled plugins' output styles, named ``PLUGIN:NAME`` as Claude Code names them.

A plugin's ``output-styles/`` folder (or the folders and files its manifest's
``outputStyles`` names instead) is searched for ``*.md`` files, folders within folders
too (:data:`MAX_DEPTH` deep, :data:`MAX_FILES` files at most). Each is read as a user's
style file is (``core/memory/output_styles.py``: front matter ``name``,
``description``, ``keep-coding-instructions``, and ``force-for-plugin``, which only a
plugin's style may set). A file that links outside its plugin is not read; a bad file
is a problem naming it, and the rest load.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from agent_tui.core.memory.output_styles import OutputStyle, read_style
from agent_tui.frontmatter import FileProblem, FrontMatterError
from agent_tui.plugins.loaded import enabled_plugins

if TYPE_CHECKING:
    from agent_tui.plugins.manifest import Plugin

MAX_DEPTH = 8
MAX_FILES = 200


def plugin_output_styles() -> tuple[list[OutputStyle], list[FileProblem]]:
    """Every enabled plugin's styles, and the files that could not be used."""
    styles: list[OutputStyle] = []
    problems: list[FileProblem] = []
    for plugin in enabled_plugins().plugins:
        for path in _style_files(plugin, problems):
            try:
                if not path.resolve().is_relative_to(plugin.root):
                    raise FrontMatterError("links outside the plugin's folder: not read", 1)
                style = read_style(path, "plugin")
            except (FrontMatterError, OSError) as exc:
                message = exc.message if isinstance(exc, FrontMatterError) else str(exc)
                problems.append(FileProblem(path, message, getattr(exc, "line", 1)))
                continue
            styles.append(OutputStyle(
                f"{plugin.name}:{style.name}", style.description or f"output style of the {plugin.name} plugin",
                style.prompt, style.keep_coding_instructions, "plugin", path, style.forced))
    return styles, problems


def _style_files(plugin: Plugin, problems: list[FileProblem]) -> list[Path]:
    found: list[Path] = []
    for given in plugin.output_styles:
        if given.is_file():
            found += [given] if given.suffix == ".md" else []
        elif given.is_dir():
            _walk(given, 0, found)
        else:
            problems.append(FileProblem(given, f"plugin {plugin.name}: outputStyles: no such "
                                               "file or folder"))
    if len(found) > MAX_FILES:
        problems.append(FileProblem(plugin.root, f"plugin {plugin.name}: more than {MAX_FILES} "
                                                 "output style files: the rest are not read"))
    return found[:MAX_FILES]


def _walk(folder: Path, depth: int, found: list[Path]) -> None:
    if depth > MAX_DEPTH or len(found) > MAX_FILES:
        return
    try:
        entries = sorted(folder.iterdir())
    except OSError:
        return
    for entry in entries:
        if entry.is_symlink() and entry.is_dir():
            continue  # a folder link could loop or leave the plugin
        if entry.is_dir():
            _walk(entry, depth + 1, found)
        elif entry.is_file() and entry.name.lower().endswith(".md"):
            found.append(entry)
