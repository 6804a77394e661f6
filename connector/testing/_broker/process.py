"""Running the tools' helper programs (Ivy, Kafka's storage tool) and stopping the brokers.

Jar resolution and storage formatting both run a JVM to its end and report its output when it
fails; both want the same call (no stdin, output and errors together, a timeout) and the same
trimming of that output, so they share these helpers rather than each spelling them out.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Finished", "last_lines", "run_captured", "shown_command", "terminate"]

_ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


@dataclass(frozen=True)
class Finished:
    """How a program run by :func:`run_captured` ended.

    Attributes
    ----------
    returncode
        Its exit code, or ``None`` if it was killed at the timeout.
    output
        Its stdout and stderr together, as far as it got.
    """

    returncode: int | None
    output: bytes

    @property
    def timed_out(self) -> bool:
        """Whether the program was killed at the timeout rather than exiting."""
        return self.returncode is None


def run_captured(
    command: Sequence[str],
    *,
    cwd: Path,
    timeout_s: float,
    env: Mapping[str, str] | None = None,
) -> Finished:
    """Run ``command`` to its end without stdin, capturing its output for error messages.

    ``env`` replaces the environment (``None``: this process's).

    Raises
    ------
    OSError
        If the program cannot be started at all (missing, not executable).
    """
    try:
        completed = subprocess.run(
            list(command),
            cwd=cwd,
            env=None if env is None else dict(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            timeout=timeout_s,
            check=False,
        )
    except subprocess.TimeoutExpired as error:
        return Finished(None, error.output or b"")
    return Finished(completed.returncode, completed.stdout)


def last_lines(output: bytes, count: int, skip: re.Pattern[str] | None = None) -> list[str]:
    """Return the last ``count`` non-blank lines of a program's output, colour codes removed.

    Lines that ``skip`` matches (progress bars, say) are left out before counting.
    """
    text = _ANSI_ESCAPE.sub("", output.decode("utf-8", errors="replace"))
    kept = [line for line in text.splitlines() if line.strip() and not (skip and skip.match(line))]
    return kept[-count:]


def shown_command(command: Sequence[str]) -> str:
    """Return the command as text, its classpath of some 50 jars shortened to their folder."""
    shown = list(command)
    for index, argument in enumerate(shown[:-1]):
        if argument == "-cp":
            jars = shown[index + 1].split(os.pathsep)
            folder = Path(jars[0]).parent
            shown[index + 1] = f"<{len(jars)} jars in {folder}>"
    return " ".join(shown)


def terminate(process: subprocess.Popen[bytes], timeout_s: float) -> bool:
    """SIGTERM, wait, then SIGKILL; return whether the process ended without SIGKILL."""
    if process.poll() is not None:
        return True
    with contextlib.suppress(ProcessLookupError):
        process.terminate()
    try:
        process.wait(timeout_s)
        return True
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        process.wait()
        return False
