"""Custom commands' own turns, and which handler each op goes to."""
