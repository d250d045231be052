"""Agent Client Protocol front end: ``agent-tui acp`` over stdio.

``server`` (the agent and ``run_acp``), ``bridge`` (one session: Events -> updates,
prompt, cancel, permission), ``updates`` (the Event and journal -> ACP mapping),
``transport`` (stdio frames: stdout for protocol only, errors for malformed input).
"""
