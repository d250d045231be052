"""The base of the models a run defines by the dozen and uses few of: each is built on its first use.

pydantic builds a model's validator and serializer when its class is made. A ``-p`` turn
imports some 150 models it never uses (the Ops and Events of the other front ends, the
journal's rarely written record kinds, the conversation's items of a resumed session, the
settings' sections no file holds, the stream events of tool calls and thinking, the hooks',
plugins' and MCP servers' models when none is set), and building them cost over 100 ms of
CPU before its first request. With ``defer_build`` a model is built on its first
validation, dump or schema instead, with the same result. The layers below the
protocol (providers, checkpoints) set ``defer_build`` in their own base.
"""

from pydantic import BaseModel, ConfigDict


class DeferredModel(BaseModel):
    """A pydantic model built on its first use, not when its module is imported."""

    model_config = ConfigDict(defer_build=True)
