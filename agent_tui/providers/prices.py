"""What the providers' configurations say models cost, for the price table.

Each model with a ``price`` in a preset or a ``providers`` entry is priced under
``PROVIDER/MODEL`` (and under its bare id for the session's default provider). A
provider marked ``free`` (a server on this machine) costs nothing for any of its
models. A model no one prices stays unknown: shown as unknown, never as 0.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agent_tui.providers.config import ProviderConfigError
from agent_tui.providers.presets import PRESETS, resolve


def _configs(configured: Mapping[str, Any] | None) -> dict[str, Any]:
    found = {}
    for name in [*PRESETS, *(configured or {})]:
        try:
            found[name] = resolve(name, configured)
        except (ProviderConfigError, ValueError):
            continue  # told when the settings were read
    return found


def provider_prices(default: str, configured: Mapping[str, Any] | None = None,
                    ) -> dict[str, dict[str, float]]:
    """Price entries (core/pricing.py's shape) by model id."""
    prices: dict[str, dict[str, float]] = {}
    for name, cfg in _configs(configured).items():
        for model, entry in cfg.models.items():
            if entry.price is None:
                continue
            price = entry.price
            row = {"input": price.input, "output": price.output,
                   "cache_read": price.input if price.cache_read is None else price.cache_read,
                   "cache_write": price.input if price.cache_write is None else price.cache_write}
            prices[f"{name}/{model}"] = row
            if name == default:
                prices[model] = row
    return prices


def free_models(default: str, configured: Mapping[str, Any] | None = None) -> list[str]:
    """Prefixes of the model ids that cost nothing ("" : the default provider's bare ids)."""
    free = []
    for name, cfg in _configs(configured).items():
        if cfg.free:
            free.append(f"{name}/")
            if name == default:
                free.append("")
    return free
