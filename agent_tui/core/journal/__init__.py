"""The journal: its records, its lines on disk, the saved sessions that hold it, and the transcript in Claude Code's shape."""
