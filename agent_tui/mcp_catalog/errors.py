"""An MCP failure in one bounded line, as the user is told it (a call's, a login's, a
resource's or a prompt's)."""

from __future__ import annotations

from pydantic import ValidationError


def short(exc: BaseException, limit: int = 300) -> str:
    """An exception in one bounded line (a validation error as its first problems)."""
    if isinstance(exc, ValidationError):
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'result'}: {err['msg']}"
            for err in exc.errors()[:3]
        )
        text = f"invalid {exc.title}: {problems}"
    else:
        text = " ".join(f"{type(exc).__name__}: {exc}".split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


__all__ = ["short"]
