"""What a model request cost, from the usage the API reported.

Prices are USD per million tokens, per model family, from Anthropic's published
pricing page. A model this table does not know has an unknown price: the cost is
``None`` and front ends say "unknown price", never a guess. Settings ``prices``
override or add entries::

    {"prices": {"claude-sonnet-5-5": {"input": 2, "output": 10,
                                      "cache_write": 2.5, "cache_read": 0.1}}}

Web searches (``usage.server_tool_use.web_search_requests``) are billed per search, at
the published $10 per 1,000 (:data:`WEB_SEARCH_USD`), on top of the tokens.

A key matches a model id exactly or as a prefix at a ``-`` boundary
(``claude-opus-4-5`` matches ``claude-opus-4-5-20251101``); the longest key wins. An
id routed to Anthropic's own providers (``anthropic/claude-...``, ``bedrock/...``)
is priced as the bare id. The providers' configurations add their models' prices
(``PROVIDER/MODEL``) and the prefixes of the models that cost nothing (``free``: a
server on this machine; ``""`` is a bare id without a ``/``).
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel, ValidationError


#: USD per web search the API ran (the server-side web search tool).
WEB_SEARCH_USD = 10 / 1000


class Price(BaseModel):
    input: float
    output: float
    cache_write: float  # 5-minute cache writes
    cache_read: float  # cache hits and refreshes


def _p(inp: float, out: float, write: float, read: float) -> Price:
    return Price(input=inp, output=out, cache_write=write, cache_read=read)


# Families whose rates the published table lists in full (base input, 5m cache write,
# cache hits, output). Newer families are left out until their rates are confirmed.
BUILTIN: dict[str, Price] = {
    "claude-opus-5": _p(5, 25, 6.25, 0.50),
    "claude-opus-4-8": _p(5, 25, 6.25, 0.50),
    "claude-opus-4-7": _p(5, 25, 6.25, 0.50),
    "claude-opus-4-6": _p(5, 25, 6.25, 0.50),
    "claude-opus-4-5": _p(5, 25, 6.25, 0.50),
    "claude-opus-4-1": _p(15, 75, 18.75, 1.50),
    "claude-opus-4": _p(15, 75, 18.75, 1.50),
    "claude-sonnet-4-6": _p(3, 15, 3.75, 0.30),
    "claude-sonnet-4-5": _p(3, 15, 3.75, 0.30),
    "claude-sonnet-4": _p(3, 15, 3.75, 0.30),
    "claude-3-7-sonnet": _p(3, 15, 3.75, 0.30),
    "claude-haiku-4-5": _p(1, 5, 1.25, 0.10),
    "claude-3-5-haiku": _p(0.80, 4, 1.0, 0.08),
    "claude-3-haiku": _p(0.25, 1.25, 0.30, 0.03),
}


#: Providers whose ids are Anthropic's (``anthropic/claude-sonnet-4-5``).
ANTHROPIC_ROUTES = ("anthropic/", "bedrock/", "vertex/")
FREE = Price(input=0, output=0, cache_write=0, cache_read=0)


class PriceTable:
    def __init__(self, overrides: Mapping[str, object] | None = None, *,
                 free: list[str] | None = None) -> None:
        self.prices = dict(BUILTIN)
        self.free = free or []
        self.problems: list[str] = []
        for key, value in (overrides or {}).items():
            try:
                self.prices[str(key)] = Price.model_validate(value)
            except ValidationError as exc:
                self.problems.append(f"prices.{key}: {exc.errors()[0]['msg']}; ignored")

    def lookup(self, model: str) -> Price | None:
        found = self._match(model)
        if found is None and model.startswith(ANTHROPIC_ROUTES):
            found = self._match(model.partition("/")[2])
        if found is None and any(model.startswith(p) if p else "/" not in model
                                 for p in self.free):
            return FREE
        return found

    def _match(self, model: str) -> Price | None:
        best: str | None = None
        for key in self.prices:
            if model == key or model.startswith(key + "-"):
                if best is None or len(key) > len(best):
                    best = key
        return self.prices[best] if best is not None else None

    def cost(
        self,
        model: str,
        *,
        input_tokens: int,
        output_tokens: int,
        cache_read_input_tokens: int = 0,
        cache_creation_input_tokens: int = 0,
        web_search_requests: int = 0,
    ) -> float | None:
        price = self.lookup(model)
        if price is None:
            return None
        return (
            input_tokens * price.input
            + output_tokens * price.output
            + cache_read_input_tokens * price.cache_read
            + cache_creation_input_tokens * price.cache_write
        ) / 1_000_000 + web_search_requests * WEB_SEARCH_USD
