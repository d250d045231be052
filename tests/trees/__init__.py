"""Helpers for tests that run real process trees: markers, finding and waiting."""
