"""Many runs of the CLI at the cost of one interpreter: a process that imports accessbench once,
then forks a child per command, each the whole CLI from ``main`` on in a process of its own
(its own working directory, signal handlers, output and exit status), as ``python -m
accessbench`` would be after its imports. For a corpus of a hundred and more commands that each
end in a second (tests/test_hostile_suites.py), the imports were most of the time.

Run as a script: reads a JSON list of commands on stdin, answers a JSON list of outcomes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
import traceback


def run_all(commands: list[dict]) -> list[subprocess.CompletedProcess | subprocess.TimeoutExpired]:
    """Each command ({"args": [...], "cwd": ..., "timeout": s}) as the CLI would answer it."""
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}  # as conftest.accessbench
    done = subprocess.run([sys.executable, __file__], input=json.dumps(commands), capture_output=True, text=True,
                          env=env, check=False)
    if done.returncode:
        raise RuntimeError(f"forked_cli exited with {done.returncode}: {done.stderr[-3000:]}")
    outcomes = []
    for command, answer in zip(commands, json.loads(done.stdout)):
        argv = [sys.executable, "-m", "accessbench", *command["args"]]
        if answer["status"] is None:
            outcomes.append(subprocess.TimeoutExpired(argv, command["timeout"], answer["stdout"], answer["stderr"]))
        else:
            outcomes.append(subprocess.CompletedProcess(argv, answer["status"], answer["stdout"], answer["stderr"]))
    return outcomes


def _child(command: dict, out: str, err: str) -> None:
    """In the forked child: the CLI as __main__ runs it; never returns."""
    status = 1
    try:
        os.chdir(command["cwd"])
        for fd, path in ((1, out), (2, err)):
            os.dup2(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), fd)
        os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
        from accessbench.cli import main
        try:
            status = main(command["args"])
        except SystemExit as e:
            status = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        except BaseException:  # as the interpreter would: the traceback on stderr, status 1
            traceback.print_exc()
            status = 1
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(status if isinstance(status, int) else 1)


def _serve(commands: list[dict], at_once: int = 4) -> list[dict]:
    # the imports every child shares: what `run` imports on its way to a suite's error (the
    # runner, the report and the data generators among them: left to each child, they were
    # two thirds of the corpus's CPU time, 35 CPU-s against 11)
    import accessbench.cli  # noqa: F401
    import accessbench.data.generate  # noqa: F401
    import accessbench.report  # noqa: F401
    import accessbench.runner.prepare  # noqa: F401
    import accessbench.runner.run  # noqa: F401
    import accessbench.suite.loader  # noqa: F401

    scratch = tempfile.mkdtemp(prefix="accessbench-forked-")
    answers: list[dict | None] = [None] * len(commands)
    running: dict[int, tuple[int, float]] = {}  # pid -> (index, deadline)
    files = [(os.path.join(scratch, f"{i}.out"), os.path.join(scratch, f"{i}.err")) for i in range(len(commands))]
    todo = list(range(len(commands)))

    def finish(i: int, status: int | None) -> None:
        out, err = files[i]
        answers[i] = {"status": status, "stdout": open(out, errors="replace").read(),
                      "stderr": open(err, errors="replace").read()}

    while todo or running:
        while todo and len(running) < at_once:
            i = todo.pop(0)
            sys.stdout.flush()
            pid = os.fork()
            if pid == 0:
                _child(commands[i], *files[i])
            running[pid] = (i, time.monotonic() + commands[i]["timeout"])
        pid, wait_status = os.waitpid(-1, os.WNOHANG)
        if pid:
            i, _ = running.pop(pid)
            finish(i, os.waitstatus_to_exitcode(wait_status))
            continue
        for pid, (i, deadline) in list(running.items()):
            if time.monotonic() > deadline:  # a hang: killed, reported as subprocess.run's timeout is
                os.kill(pid, 9)
                os.waitpid(pid, 0)
                running.pop(pid)
                finish(i, None)
        time.sleep(0.005)
    for out, err in files:
        for path in (out, err):
            os.unlink(path)
    os.rmdir(scratch)
    return answers


if __name__ == "__main__":
    print(json.dumps(_serve(json.loads(sys.stdin.read()))))
