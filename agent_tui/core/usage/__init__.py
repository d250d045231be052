"""What a model request may hold and what it costs: the window and limits, thinking, cache breakpoints, usage and prices."""
