"""splitmix64: the one PRNG every worker and the data generator share.

Chosen because it is a few lines in any language, has a 64-bit state that is trivial to seed,
and passes BigCrush; exactness across languages matters more here than speed.
"""

MASK64 = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15

FNV_OFFSET = 0xCBF29CE484222325
FNV_PRIME = 0x100000001B3


class SplitMix64:
    __slots__ = ("state",)

    def __init__(self, seed: int) -> None:
        self.state = seed & MASK64

    def next(self) -> int:
        self.state = (self.state + _GOLDEN) & MASK64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        return z ^ (z >> 31)

    def unit(self) -> float:
        """A double in [0, 1) from the top 53 bits: exact in every IEEE-754 language."""
        return (self.next() >> 11) * (1.0 / (1 << 53))


def fnv1a64(data: bytes, h: int = FNV_OFFSET) -> int:
    for byte in data:
        h = ((h ^ byte) * FNV_PRIME) & MASK64
    return h


def derive_seed(base: int, *names: str) -> int:
    """A seed for one named stream (a table column, a step parameter) from the suite seed,
    so changing one column or step never shifts the values of another."""
    return fnv1a64("/".join([str(base), *names]).encode())
