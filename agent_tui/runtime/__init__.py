"""Local processes: the run unit, containment and the sandbox, leftovers of earlier agents, file watches."""
