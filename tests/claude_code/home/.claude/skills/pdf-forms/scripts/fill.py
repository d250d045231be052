"""Fills a PDF form (an example script a skill ships; never run by the tests)."""
import sys

print("would fill", sys.argv[1:])
