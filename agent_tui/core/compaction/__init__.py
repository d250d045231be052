"""Compaction and ``/context``: what fills the window, and the summary that stands for it."""
