"""A conversation: takes Ops, runs its work one at a time in one slot, emits Events; the work it starts, its controls, ``/clear`` and rewind."""
