"""Where the ripgrep binary is: the pinned ``ripgrep`` package's, else the PATH's.

The search tools run it (``tools/search``), and the TUI's file picker lists files with
it (``ui/input/file_index.py``), so both find the same binary the same way.
"""

from __future__ import annotations

import functools
import importlib.metadata
import os
import shutil
import sys
import sysconfig

PACKAGE = "ripgrep"  # the Python package that ships the binary (pinned in pyproject.toml)


@functools.cache
def find_rg() -> str | None:
    """The ripgrep binary: the ``ripgrep`` package's, else the PATH's, else None.

    Looked up once per process (``find_rg.cache_clear()`` looks again)."""
    return package_rg() or shutil.which("rg")


def package_rg() -> str | None:
    """The binary the ``ripgrep`` package installed: named in its record of files,
    else in the scripts folder of this Python (a venv's ``bin/``, beside ``python``)."""
    try:
        dist = importlib.metadata.distribution(PACKAGE)
    except importlib.metadata.PackageNotFoundError:
        return None
    for file in dist.files or ():
        if file.name in ("rg", "rg.exe"):
            path = os.path.normpath(str(dist.locate_file(file)))
            if os.path.isfile(path) and os.access(path, os.X_OK):
                return path
    folders = [os.path.dirname(sys.executable), sysconfig.get_path("scripts")]
    return shutil.which("rg", path=os.pathsep.join(folders))
