"""Object ids in the real API's format (``msg_01...``, ``toolu_01...``, ``req_01...``)."""

from __future__ import annotations

import random
import string

__all__ = ["rand_id", "new_tool_use_id", "new_server_tool_use_id"]

_ALNUM = string.ascii_letters + string.digits


def rand_id(prefix: str) -> str:
    return prefix + "01" + "".join(random.choice(_ALNUM) for _ in range(22))


def new_tool_use_id() -> str:
    """A fresh id in the real API's format (``toolu_01...``)."""
    return rand_id("toolu_")


def new_server_tool_use_id() -> str:
    """A fresh server tool call id (``srvtoolu_01...``), as in ``pause_turn`` replies."""
    return rand_id("srvtoolu_")
