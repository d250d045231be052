"""A ``web_search`` call's results under its line in the transcript: each title with
its link (a terminal hyperlink) and the page's age, without unfolding the call."""

from __future__ import annotations

from rich.style import Style
from rich.text import Text

from agent_tui.core.calls.search_listing import listed_results
from agent_tui.ui.render.safe_text import clean
from agent_tui.ui.render.states import role_style

MAX_SHOWN = 8  # results listed; the rest are counted (Ctrl+O shows the whole result)


def search_listing(result: str, variables: dict[str, str]) -> Text | None:
    """The listing, or None when the result lists nothing (a failed search)."""
    found = listed_results(result)
    if not found:
        return None
    muted = role_style(variables, "text-muted")
    out = Text()
    for n, item in enumerate(found[:MAX_SHOWN], 1):
        if n > 1:
            out.append("\n")
        out.append(clean(item.title), style="bold")
        out.append("\n  ")
        url = clean(item.url)
        link = Style(link=url) if url.startswith(("https://", "http://")) else Style()
        out.append(url, style=role_style(variables, "accent") + link)
        if item.page_age:
            out.append(f"  {clean(item.page_age)}", style=muted)
    if len(found) > MAX_SHOWN:
        out.append(f"\n… {len(found) - MAX_SHOWN} more (Ctrl+O shows the whole result)",
                   style=muted)
    return out
