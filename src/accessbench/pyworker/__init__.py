"""The Python worker: one process per (method, target, path), speaking protocol v1 on stdio.

It lives inside the accessbench package (unlike the other languages' workers in
``workers/``) because it shares the reference PRNG, generators, checksum and SQL text code
in ``accessbench.protocol``.
"""
