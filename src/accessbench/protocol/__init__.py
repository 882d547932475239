"""The worker protocol's reference implementation in Python.

Every worker language implements these pieces (PRNG, generators, checksum, SQL text); the
Python versions here are the reference the shared test vectors are made from, and both the
data loader and the Python worker use them.
"""

PROTOCOL_VERSION = 1
