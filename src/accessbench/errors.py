"""Errors a user can fix. The CLI prints each as one line and exits with status 2."""


class InputError(Exception):
    """Bad input: a suite file, an option or a value. ``str()`` is the whole message."""


class SuiteError(InputError):
    def __init__(self, source: str, line: int | None, message: str) -> None:
        where = f"{source}:{line}" if line else source
        super().__init__(f"{where}: {message}")


class Fault(Exception):
    """A run stopped by something other than its input: a managed server that died, a results
    store that can no longer be written. The CLI prints it as one line and exits with status 1."""


def first_line(error: BaseException) -> str:
    """An error's first line: drivers' messages run on over several (DETAIL, HINT, context)."""
    lines = str(error).strip().splitlines()
    return lines[0] if lines else type(error).__name__
