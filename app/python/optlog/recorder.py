# SPDX-License-Identifier: MIT
"""The child process `optlog record --db STUDY` and the pipe to it.

Logging must never stop training: a failure to write is said once on stderr, and from then on
every write is a no-op.
"""
import os
import shutil
import subprocess
import sys
import time

from ._binary import packaged_binary
from .events import EXIT_STATUS

MISSING = ("optlog: the recorder `optlog` is not on PATH: pip install the optlog wheel into this "
           "environment, install the optlog Debian package (sudo apt install ./optlog_*.deb), "
           "or set OPTLOG to the optlog binary; "
           "this run is not recorded, training goes on")

STEP_FLUSH_SECONDS = 0.02  # steps are flushed at most this often; every other event at once

_missing_said = False


def optlog_binary():
    """The optlog executable: $OPTLOG if set, else the wheel's own beside this module, else `optlog`
    on PATH; None when none exists."""
    named = os.environ.get("OPTLOG")
    if named:
        return shutil.which(named) or (named if os.access(named, os.X_OK) else None)
    return packaged_binary() or shutil.which("optlog")


def say(message):
    try:
        print(message, file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass  # stderr itself is gone: nothing left to tell


class Recorder:
    """Writes event lines to a child's stdin. `command` is the whole child command line."""

    def __init__(self, command):
        self._command = command
        self._child = None
        self._failed = False
        self._last_flush = 0.0
        try:
            # A session of its own: Ctrl-C in the terminal reaches only the trainer, whose
            # `finished` event then says cancelled. Its stdout and stderr are ours, so what it
            # says when it refuses the stream is where the user looks.
            self._child = subprocess.Popen(command, stdin=subprocess.PIPE, start_new_session=True)
        except OSError as e:
            self._fail(f"cannot start {' '.join(command)} ({e})")

    @property
    def recording(self):
        return self._child is not None and not self._failed

    def write(self, text, flush=True):
        """Writes one whole line in one call, so an interrupt never leaves half a line."""
        if not self.recording:
            return
        try:
            self._child.stdin.write(text.encode("utf-8"))
            now = time.monotonic()
            if flush or now - self._last_flush >= STEP_FLUSH_SECONDS:
                self._child.stdin.flush()
                self._last_flush = now
        except (OSError, ValueError) as e:  # BrokenPipeError: the child is gone; ValueError: pipe closed
            self._fail(f"writing to `optlog record` failed ({getattr(e, 'strerror', None) or e})")

    def close(self, outcome="completed", timeout_seconds=60):
        """Closes the pipe and waits for the child to store the run. Says on stderr when it exits
        with another status than `optlog run` would for the outcome: it refused the stream."""
        if self._child is None:
            return
        child, self._child = self._child, None
        try:
            child.stdin.close()
        except (OSError, ValueError):
            pass  # already said, if it mattered
        try:
            status = child.wait(timeout=timeout_seconds)
        except subprocess.TimeoutExpired:
            say(f"optlog: `optlog record` (pid {child.pid}) is still storing the run after {timeout_seconds} s; "
                f"left running")
            return
        expected = EXIT_STATUS.get(outcome)
        if status != expected and not self._failed:
            say(f"optlog: `optlog record` {self._status_text(status)} where a {outcome} run exits {expected}: "
                f"the study may not hold this run as it ended (what it said is above)")

    def _fail(self, why):
        if self._failed:
            return
        self._failed = True
        said = ""
        if self._child is not None:
            try:
                status = self._child.wait(timeout=2)
                said = f"; `optlog record` {self._status_text(status)}"
                said += " (what it said is above)" if status > 0 else ""
            except subprocess.TimeoutExpired:
                said = "; `optlog record` is still running"
            try:
                self._child.stdin.close()
            except (OSError, ValueError):
                pass
        say(f"optlog: recording stopped: {why}{said}. Training goes on, unrecorded from here")

    @staticmethod
    def _status_text(status):
        return f"was killed by signal {-status}" if status < 0 else f"exited with status {status}"


def start_recorder(study):
    """A Recorder for `optlog record --db STUDY`, or None (said once per process) when there is no
    optlog binary."""
    global _missing_said
    binary = optlog_binary()
    if binary is None:
        if not _missing_said:
            named = os.environ.get("OPTLOG")
            say(MISSING if not named else
                f"optlog: OPTLOG is set to '{named}', which is not an executable; point it at the optlog "
                f"binary or unset it; this run is not recorded, training goes on")
            _missing_said = True
        return None
    return Recorder([binary, "record", "--db", os.fspath(study)])
