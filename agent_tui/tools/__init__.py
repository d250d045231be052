"""The tools the model calls, one module (or folder) each, and their catalog."""


def load_catalog() -> None:
    """Register every built-in tool's facts (``tools/catalog.py``): the loader the entry
    point gives ``protocol.tool_names.load_with``."""
    import agent_tui.tools.catalog  # noqa: F401  (registers on import)


def know_the_tools() -> None:
    """Permission rules, hook matchers and the front ends read tools by name: the
    built-in tools' facts load at the first such question, not at start-up. What every
    entry point that builds a session calls first (the command line, the benches)."""
    from agent_tui.protocol import tool_names

    tool_names.load_with(load_catalog)
