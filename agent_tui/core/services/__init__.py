"""What a session's turns stand on: its deps, the hooks port, the message queue, the guarded emit and which model it talks to."""
