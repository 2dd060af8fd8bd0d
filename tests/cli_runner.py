"""The one way tests run the ``bioaccel`` command, in two kinds that prove different things:

- :func:`invoke` runs it in this process through click's ``CliRunner``: fast, monkeypatches
  apply, stdout and stderr kept apart (``Result.stdout``, ``.stderr``, ``.output``,
  ``.exit_code``). Use it for option handling and messages.
- :func:`run_process` starts a real ``python -m bioaccel.cli`` child: the exit status, the
  bytes on stdout/stderr and the environment as a user's shell gives them (a fresh import,
  variables read once per process, signals). Returns ``subprocess.CompletedProcess`` with
  text output.

Both take the command's words as positional arguments (paths and numbers are turned into
strings). :data:`COMMAND` is the child's argv prefix, for tests that drive a ``Popen``
themselves (Ctrl-C, pipes).
"""

from __future__ import annotations

import subprocess
import sys

from tests.datasets import child_env

#: argv of the command as a child process
COMMAND = (sys.executable, "-m", "bioaccel.cli")


def invoke(*args, input=None, env=None, catch_exceptions=True):
    """``bioaccel *args`` in this process (click's CliRunner); ``input`` is its stdin."""
    from click.testing import CliRunner

    from bioaccel.cli import main

    return CliRunner().invoke(
        main, [str(a) for a in args], input=input, env=env, catch_exceptions=catch_exceptions
    )


def run_process(*args, cwd=None, stdin=None, timeout=None, **env):
    """``python -m bioaccel.cli *args`` as a child; ``env`` overrides the session's
    environment (:func:`tests.datasets.child_env`), ``stdin`` is text fed to it."""
    return subprocess.run(
        [*COMMAND, *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        input=stdin,
        timeout=timeout,
        env=child_env(**env),
    )
