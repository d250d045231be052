"""Tool calls: the Tool interface every tool implements, their states, and the permission question asked before one runs."""
