"""Errors a user can fix. The CLI prints each as one line and exits with status 2."""


class InputError(Exception):
    """Bad input: a suite file, an option or a value. ``str()`` is the whole message."""


class SuiteError(InputError):
    def __init__(self, source: str, line: int | None, message: str) -> None:
        where = f"{source}:{line}" if line else source
        super().__init__(f"{where}: {message}")
