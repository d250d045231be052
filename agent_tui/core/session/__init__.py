"""A conversation: takes Ops, runs turns one at a time, emits Events; its controls and rewind."""
