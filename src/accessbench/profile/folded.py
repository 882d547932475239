"""What a profile says: its folded stacks (``root;…;leaf`` → samples) read as the frames that
hold the CPU (self: samples where the frame is the leaf; total: samples where it is anywhere
on the stack), the difference of two profiles in shares of their own samples (two profiles of
different lengths compare by share, not by count), and flame graphs drawn by inferno.

Shares are printed at the precision the samples allow: a frame seen in 3 of 400 samples is
"0.8%", never "0.75%".
"""

from __future__ import annotations

import subprocess
from collections import Counter
from dataclasses import dataclass

from .samplers import fold, tool


def parse(text: str) -> Counter[str]:
    return fold(text.splitlines())


def text(stacks: Counter[str]) -> str:
    return "".join(f"{stack} {count}\n" for stack, count in sorted(stacks.items()))


@dataclass(frozen=True)
class Frame:
    name: str
    self_samples: int
    total_samples: int


def frames(stacks: Counter[str]) -> list[Frame]:
    """Every frame with its self and total samples, the most self first (a frame recursing
    counts once per stack in its total)."""
    own: Counter[str] = Counter()
    total: Counter[str] = Counter()
    for stack, count in stacks.items():
        names = stack.split(";")
        own[names[-1]] += count
        for name in set(names):
            total[name] += count
    return sorted((Frame(n, own[n], total[n]) for n in total), key=lambda f: (-f.self_samples, -f.total_samples, f.name))


def share(part: int, whole: int) -> str:
    """A share at the precision ``whole`` samples give: one decimal from 1,000 samples on."""
    if not whole:
        return "—"
    value = 100 * part / whole
    return f"{value:.1f}%" if whole >= 1000 or value < 0.95 else f"{value:.0f}%"


@dataclass(frozen=True)
class Change:
    name: str
    a: float         # self share in the first profile
    b: float         # and in the second
    total_a: float   # total share (the frame anywhere on the stack) in the first
    total_b: float   # and in the second

    @property
    def moved(self) -> float:
        """The larger of the two shifts: a layer's own frames move most in total, a leaf in self."""
        return max(abs(self.b - self.a), abs(self.total_b - self.total_a))


def diff(a: Counter[str], b: Counter[str]) -> list[Change]:
    """Each frame's self and total shares in ``a`` and in ``b``, the largest change first."""
    def shares(stacks: Counter[str]) -> dict[str, tuple[float, float]]:
        whole = sum(stacks.values())
        return {f.name: (f.self_samples / whole, f.total_samples / whole) for f in frames(stacks)} if whole else {}

    sa, sb = shares(a), shares(b)
    changes = [Change(n, sa.get(n, (0.0, 0.0))[0], sb.get(n, (0.0, 0.0))[0], sa.get(n, (0.0, 0.0))[1],
                      sb.get(n, (0.0, 0.0))[1]) for n in set(sa) | set(sb)]
    return sorted(changes, key=lambda c: (-c.moved, c.name))


def flame_graph(stacks: Counter[str], title: str, subtitle: str = "") -> str:
    """An SVG flame graph (inferno's; it works offline: no script or font is fetched)."""
    return _inferno(["inferno-flamegraph", "--title", title, "--subtitle", subtitle or " ", "--hash",
                     "--minwidth", "0.1"], text(stacks))


def diff_graph(a: Counter[str], b: Counter[str], title: str, subtitle: str = "") -> str:
    """A differential flame graph: ``b``'s stacks, red where they take a larger share than in
    ``a``, blue where a smaller (inferno-diff-folded with --normalize)."""
    import tempfile

    with tempfile.NamedTemporaryFile("w", suffix=".folded") as fa, \
            tempfile.NamedTemporaryFile("w", suffix=".folded") as fb:
        fa.write(text(a))
        fb.write(text(b))
        fa.flush()
        fb.flush()
        done = subprocess.run([_program("inferno-diff-folded"), "--normalize", fa.name, fb.name],
                              capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"inferno-diff-folded: {done.stderr.strip()}")
    return _inferno(["inferno-flamegraph", "--title", title, "--subtitle", subtitle or " ", "--minwidth", "0.1"],
                    done.stdout)


def _program(name: str) -> str:
    found = tool(name)
    if found is None:
        raise RuntimeError(f"{name} is not installed (make setup installs inferno into .cache/tools)")
    return found


def _inferno(argv: list[str], folded: str) -> str:
    done = subprocess.run([_program(argv[0]), *argv[1:]], input=folded, capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"{argv[0]}: {done.stderr.strip()}")
    return done.stdout
