"""Sub-agents and forked sessions: nested agent loops, and what a resumed journal settles first."""
