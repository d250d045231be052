"""The TUI's link to the core: the session hosted on its thread, the events it
sends shown, and what a running session holds."""
