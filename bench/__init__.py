"""Benchmarks and chaos trials for agent-tui: ``make bench`` and ``make chaos``.

- :mod:`bench.run`: the figures of ``make bench`` (one table, JSON under ``results/``).
- :mod:`bench.chaos`: ``make chaos``, random interrupts (``chaos_interrupts``) and random
  crashes of a real agent process (``chaos_crash``), in parallel (``chaos_pool``).
- The measuring functions live one area per module (``interrupts``, ``startup``,
  ``keys``, ``memory``) so the smoke test can call each once.

Every figure is measured next to a reference taken in the same run: the machine is
shared and noisy, so ratios and medians are reported, never a lone absolute time.
"""

from agent_tui.tools import know_the_tools as _know_the_tools

# Sessions built here, as the entry point's (agent_tui/cli), read the built-in tools'
# facts from the catalog, loaded at the first question.
_know_the_tools()
