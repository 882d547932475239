"""Values of a worker's ``hello`` capabilities that the runner reads by name (protocol/PROTOCOL.md)."""

# capabilities.concurrency: one client per worker process. The runner then starts C worker
# processes for a step with C clients and merges their answers. Any other value is free text
# saying how the worker drives several clients itself (``threads (…)``, ``async tasks (…)``).
PROCESSES = "processes"
