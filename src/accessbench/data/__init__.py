"""Suite data: generated from the seed, the same on every target."""
