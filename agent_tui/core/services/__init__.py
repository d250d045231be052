"""What a session's turns stand on: its deps, the hooks port, the message queue, the guarded emit, which model it talks to, and the interface of the work the session's slot runs."""
