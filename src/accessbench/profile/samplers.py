"""Who samples a process's stacks: each ecosystem's own sampler, attached from outside to a
worker or a server backend that is already running, so that the worker is started and runs
its step exactly as in its timed trials.

- ``perf`` (linux-perf) for native code — the C, Go and Rust workers, Node's (whose V8 writes
  a map of its compiled JavaScript for perf when the worker starts under --profile) and the
  servers' backends; DWARF call graphs, since Debian's libraries keep no frame pointers.
- ``py-spy`` for Python: Python frames, and the C extensions' native frames beneath them.
- Java Flight Recorder for the JVM, started and dumped with ``jcmd``, read with ``jfr``.

A sampler that is not installed says so in one line, and the cells of its language say it in
place of a profile. Each returns the stacks it saw folded: ``root;…;leaf`` → samples.
"""

from __future__ import annotations

import errno
import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Protocol

from ..worker_process import workers_dir

RATE_HZ = 499  # samples per second: off the timer's round numbers, light enough for DWARF stacks


def tools_bin() -> Path:
    """Where `make setup` installs inferno's folding and flame graph programs (.cache/tools/bin)."""
    return workers_dir().parent / ".cache" / "tools" / "bin"


def tool(name: str) -> str | None:
    """A program from .cache/tools, accessbench's own environment (py-spy) or the PATH."""
    for folder in (tools_bin(), Path(sys.executable).parent):
        if (folder / name).exists():
            return str(folder / name)
    return shutil.which(name)


class Recording(Protocol):
    def stop(self) -> Counter[str]: ...


class Sampler(Protocol):
    name: str
    counts: str  # what one sample stands for, as `show --profile` says it

    def missing(self) -> str | None: ...
    def start(self, pids: list[int], threads: bool, directory: str) -> Recording: ...


def _interrupt(proc: subprocess.Popen, what: str, timeout: float = 60) -> None:
    """Stop a recorder the way its user does (Ctrl-C), so that it writes what it recorded."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise RuntimeError(f"{what} did not stop within {timeout:.0f} s") from None


def _enable(proc: subprocess.Popen, control: str, ack: int, timeout: float = 30) -> None:
    """Tell a perf started disabled to enable its events, and wait for its acknowledgement:
    sampling has begun when this returns."""
    deadline = time.monotonic() + timeout
    while True:  # its control FIFO has no reader until perf has started
        try:
            fd = os.open(control, os.O_WRONLY | os.O_NONBLOCK)
            break
        except OSError as e:
            if e.errno != errno.ENXIO:
                raise
        _alive(proc, deadline, timeout)
        time.sleep(0.01)
    try:
        os.write(fd, b"enable\n")
    finally:
        os.close(fd)
    answer = b""
    while b"ack" not in answer:
        _alive(proc, deadline, timeout)
        if select.select([ack], [], [], 0.05)[0]:
            chunk = os.read(ack, 64)  # b"": perf has not opened it yet
            answer += chunk
            if not chunk:
                time.sleep(0.01)


def _alive(proc: subprocess.Popen, deadline: float, timeout: float) -> None:
    if proc.poll() is not None:
        raise RuntimeError(f"perf record exited at once: {_tail(proc)}")
    if time.monotonic() > deadline:
        raise RuntimeError(f"perf record did not start sampling within {timeout:.0f} s")


def _tail(proc: subprocess.Popen) -> str:
    err = proc.stderr.read() if proc.stderr else ""
    lines = [line for line in (err or "").splitlines() if line.strip()]
    return lines[-1].strip() if lines else f"exit status {proc.returncode}"


def fold(lines) -> Counter[str]:
    """Folded stacks as written (``stack count`` per line) into a counter."""
    stacks: Counter[str] = Counter()
    for line in lines:
        stack, _, count = line.rstrip("\n").rpartition(" ")
        if stack and count.isdigit():
            stacks[stack] += int(count)
    return stacks


class _PerfRecording:
    def __init__(self, pids: list[int], threads: bool, directory: str, call_graph: str) -> None:
        self.data = os.path.join(directory, "perf.data")
        who = ["-t" if threads else "-p", ",".join(map(str, pids))]
        # perf writes its file before it has enabled its events, and on a busy machine it may
        # enable them late in the trial or not at all (a profile of a few samples, or none): it
        # starts disabled (-D -1) and the trial waits until perf has acknowledged "enable"
        self.fifos = [os.path.join(directory, name) for name in ("perf.ctl", "perf.ack")]
        for fifo in self.fifos:
            os.mkfifo(fifo)
        ack = os.open(self.fifos[1], os.O_RDONLY | os.O_NONBLOCK)  # before perf opens it to write
        try:
            self.proc = subprocess.Popen(
                ["perf", "record", "-q", "-D", "-1", "--control", f"fifo:{','.join(self.fifos)}", "-e", "cpu-clock",
                 "-F", str(RATE_HZ), "--call-graph", call_graph, "-o", self.data, *who],
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            _enable(self.proc, self.fifos[0], ack)
        finally:
            os.close(ack)

    def stop(self) -> Counter[str]:
        early = self.proc.poll() is not None  # it should still be sampling
        _interrupt(self.proc, "perf record")
        if early:
            raise RuntimeError(f"perf record stopped before the trial ended: {_tail(self.proc)}")
        # without the period field: a stack counts its samples, not the nanoseconds each stands for;
        # --no-inline: each frame is the function its address lies in. Naming the functions inlined
        # there has perf ask binutils' addr2line of every address, a minute for one second of a
        # Rust worker (its binary carries the standard library's debug information), while the
        # workers and Debian's servers are built without the debug information that names them
        script = subprocess.run(["perf", "script", "--no-inline", "-F", "comm,pid,tid,event,ip,sym,dso", "-i", self.data],
                                capture_output=True, text=True)
        if script.returncode:
            raise RuntimeError(f"perf script: {script.stderr.strip().splitlines()[-1:]}")
        collapse = subprocess.run([tool("inferno-collapse-perf")], input=script.stdout,
                                  capture_output=True, text=True)
        if collapse.returncode:
            raise RuntimeError(f"inferno-collapse-perf: {collapse.stderr.strip()}")
        for path in (self.data, *self.fifos):
            os.remove(path)
        stacks = unaddressed(fold(collapse.stdout.splitlines()))
        if not stacks:  # what perf said of it, for the note in the profile's place
            raise RuntimeError(f"no samples recorded ({_tail(self.proc)}; {script.stderr.strip()[-200:] or 'perf script: none'})")
        return stacks


class Perf:
    """perf's stacks unwound by DWARF (Debian's libraries and servers keep no frame pointers),
    or by frame pointers for a JIT's code, which has no DWARF but keeps them (V8's)."""

    name = "perf"
    counts = "on-CPU samples, user and kernel (cpu-clock)"

    def __init__(self, call_graph: str = "dwarf,16384") -> None:
        self.call_graph = call_graph

    def missing(self) -> str | None:
        if shutil.which("perf") is None:
            return "perf is not installed (apt-get install linux-perf; make setup does)"
        if tool("inferno-collapse-perf") is None:
            return "inferno is not installed (make setup installs it into .cache/tools)"
        return None

    def start(self, pids: list[int], threads: bool, directory: str) -> _PerfRecording:
        return _PerfRecording(pids, threads, directory, self.call_graph)


class _PySpyRecording:
    def __init__(self, pid: int, directory: str) -> None:
        self.out = os.path.join(directory, "py-spy.folded")
        # --nonblocking: the stacks read from the process's memory while it runs. Native stacks
        # (--native) would need the thread stopped for every sample, which lands its samples in
        # the system calls the stops interrupt (send, poll) and halves its speed; without them, a
        # C extension's time is its calling Python frame's own
        self.proc = subprocess.Popen(
            [tool("py-spy"), "record", "--pid", str(pid), "--rate", str(RATE_HZ), "--format", "raw", "--nonblocking",
             "--nolineno", "--output", self.out], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        time.sleep(0.3)  # py-spy writes its output only at the end: give it the time to attach
        if self.proc.poll() is not None:
            raise RuntimeError(f"py-spy exited at once: {_tail(self.proc)}")

    def stop(self) -> Counter[str]:
        _interrupt(self.proc, "py-spy")
        if not os.path.exists(self.out):
            raise RuntimeError(f"py-spy wrote nothing: {_tail(self.proc)}")
        with open(self.out) as f:
            stacks = fold(f)
        os.remove(self.out)
        return unaddressed(stacks)


def unaddressed(stacks: Counter[str]) -> Counter[str]:
    """Frames named the same in every process, so that two profiles compare: a native frame
    py-spy could not name is its address in a library (``0x7f… (libc.so.6)``), named by its
    library alone (``[libc.so.6]``), as perf names such frames; and a library a Python wheel
    bundles carries a hash of its build in its name (``libpq-9b38f5e3.so.5.17``), dropped."""
    named: Counter[str] = Counter()
    for stack, count in stacks.items():
        named[_WHEEL_HASH.sub("", _ADDRESS.sub(r"[\1]", stack))] += count
    return named


_WHEEL_HASH = re.compile(r"(?<=\w)-[0-9a-f]{8}(?=\.so)")
_ADDRESS = re.compile(r"0x[0-9a-f]+ \(([^)]+)\)")


class PySpy:
    name = "py-spy"
    counts = "samples of the worker's Python thread while it is not idle (a C extension's time is its calling Python frame's)"

    def missing(self) -> str | None:
        return None if tool("py-spy") else "py-spy is not installed (pip install py-spy; make setup does)"

    def start(self, pids: list[int], threads: bool, directory: str) -> _PySpyRecording:
        return _PySpyRecording(pids[0], directory)


class _FlightRecording:
    def __init__(self, pid: int, directory: str) -> None:
        self.pid, self.out = pid, os.path.join(directory, "worker.jfr")
        # JFR samples threads running Java code, every 10 ms in its profile settings: every 1 ms
        # here, so that a short profile has enough samples (JFR throttles below that)
        self._jcmd("JFR.start", "name=accessbench", "settings=profile", "jdk.ExecutionSample#period=1ms")

    def _jcmd(self, *command: str) -> None:
        done = subprocess.run(["jcmd", str(self.pid), *command], capture_output=True, text=True, timeout=60)
        if done.returncode:
            raise RuntimeError(f"jcmd {command[0]}: {(done.stdout + done.stderr).strip().splitlines()[-1:]}")

    def stop(self) -> Counter[str]:
        self._jcmd("JFR.stop", "name=accessbench", f"filename={self.out}")
        printed = subprocess.run(["jfr", "print", "--json", "--events", "jdk.ExecutionSample", self.out],
                                 capture_output=True, text=True)
        if printed.returncode:
            raise RuntimeError(f"jfr print: {printed.stderr.strip()}")
        os.remove(self.out)
        return jfr_folded(json.loads(printed.stdout))


def jfr_folded(recording: dict) -> Counter[str]:
    """JFR's execution samples (each stack leaf first) folded root first; a frame is its class
    and method, as JFR names them."""
    stacks: Counter[str] = Counter()
    for event in recording.get("recording", {}).get("events", []):
        frames = (event.get("values", {}).get("stackTrace") or {}).get("frames") or []
        names = [f"{f['method']['type']['name']}.{f['method']['name']}" for f in reversed(frames)]
        if names:
            stacks[";".join(names)] += 1
    return stacks


class FlightRecorder:
    name = "jfr"
    counts = "samples of threads running Java code (JFR's execution samples; time in native code or waiting is not seen)"

    def missing(self) -> str | None:
        absent = [t for t in ("jcmd", "jfr") if shutil.which(t) is None]
        return f"{' and '.join(absent)} not found (a JDK 17+ has them)" if absent else None

    def start(self, pids: list[int], threads: bool, directory: str) -> _FlightRecording:
        return _FlightRecording(pids[0], directory)


class Absent:
    """A language with no sampler here: its cells say so."""

    name = "none"
    counts = ""

    def __init__(self, why: str) -> None:
        self.why = why

    def missing(self) -> str | None:
        return self.why

    def start(self, pids: list[int], threads: bool, directory: str) -> Recording:
        raise RuntimeError(self.why)


class InterpreterPerf(Perf):
    """perf on an interpreter with no sampler of its script's frames packaged here (Ruby, PHP,
    Perl): the interpreter's own C frames (vm_exec_core, execute_ex, Perl_pp_*) and the driver's
    libraries under them, which is where a driver's cost shows; the script's functions are not named."""

    name = "perf (interpreter)"
    counts = "on-CPU samples, user and kernel (cpu-clock); the interpreter's C frames, not its script's functions"


# One sampler per worker language; the servers' backends are perf's.
SAMPLERS: dict[str, Sampler] = {
    "python": PySpy(), "c": Perf(), "go": Perf(), "rust": Perf(), "node": Perf("fp"), "java": FlightRecorder(),
    "cpp": Perf(), "ruby": InterpreterPerf(), "php": InterpreterPerf(), "perl": InterpreterPerf(),
}
SERVER = Perf()
# Beside a runtime's own sampler, perf's view of the same process where it names frames: a
# Python worker's C extensions and libraries (psycopg's C loaders, libpq), which py-spy
# counts as the Python frame that called them.
NATIVE: dict[str, Sampler] = {"python": Perf()}
COUNTS = {s.name: s.counts for s in (*SAMPLERS.values(), SERVER)}


def for_language(language: str) -> Sampler:
    return SAMPLERS.get(language) or Absent(f"no sampler for {language} workers here")
