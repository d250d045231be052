"""What a project's settings file may not do until the folder is trusted.

Untrusted, a project's file only takes away: its deny and ask rules apply, its hooks
run, and everything that would grant is withheld here, each part named once in one
notice per file (:func:`untrusted_message`).
"""

from __future__ import annotations

from agent_tui.settings.keys import withhold_file
from agent_tui.settings.schema import SettingsFile


def withhold(data: SettingsFile) -> tuple[SettingsFile, list[str]]:
    """``data`` without what grants, and the names of what was there (in field order):
    each key's row says what of it grants (:mod:`.keys`, :mod:`.policies`)."""
    update, found = withhold_file(data)
    copy = data.model_copy(update=update)
    copy._hooks_where = data._hooks_where  # the hooks stay: guards always run
    return copy, found


def untrusted_message(withheld: list[str]) -> str:
    return (f"this folder is not trusted, so its {', '.join(withheld)} "
            f"{'is' if len(withheld) == 1 else 'are'} ignored; its deny and ask rules "
            "apply and its hooks run. Trust it in agent-tui's trust dialog or with --trust "
            "(or accept Claude Code's trust dialog for it)")
