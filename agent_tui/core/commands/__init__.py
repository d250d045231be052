"""Custom commands as they run (their lines, their checks), and which handler each op goes to."""
