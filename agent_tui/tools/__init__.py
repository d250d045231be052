"""The tools the model calls, one module (or folder) each, and their catalog."""


def load_catalog() -> None:
    """Register every built-in tool's facts (``tools/catalog.py``): the loader the entry
    point gives ``protocol.tool_names.load_with``."""
    import agent_tui.tools.catalog  # noqa: F401  (registers on import)
