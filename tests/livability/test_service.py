#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The dsh-sandbox program as its parts now build it: cli/ and service/ as internal static libraries,
every subcommand ending with one named outcome instead of "a negative number means success".

What a user sees must not have moved:
  - every command (the program itself, each subcommand, each of their commands: serve, mcp and
    remote-helper included) answers --help and --version on stdout with exit 0 and does nothing else:
    no state, config or cache directory made, nothing written where it ran, and a front end that
    was handed a request on its input never answers it (it did not start serving);
  - an unknown option is still a usage error (exit 2, one stderr line, nothing on stdout);
  - run still ends with the command's own exit status, whichever it is, on each backend this host
    has (the end of a subcommand passes an exit status through, whatever its value).

Each case runs the built `dsh-sandbox` ($DSH_SANDBOX_BIN) with a HOME, XDG directories and a state
directory of its own under $DSH_TEST_SCRATCH, checked on disk afterwards.  Output is unittest's
verbose form, one line per case, then "N passed, N failed, N skipped".
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from livability import BIN, SCRATCH, bwrap_works, landlock_abi, run_suite  # noqa: E402

# An upper bound on any one run, so a command that went on serving fails the case instead of hanging it.
PATIENCE = 60

# Every path to a parser of its own: the program's, each subcommand's and each of their commands'.
COMMAND_PATHS = [
    [],
    ["run"], ["bash"], ["confine"], ["probe"],
    ["session"], ["session", "new"], ["session", "mode"], ["session", "show"], ["session", "list"],
    ["policy"], ["policy", "resolve"], ["policy", "context"],
    ["fs"], ["fs", "write"], ["fs", "edit"], ["fs", "mkdir"], ["fs", "rm"], ["fs", "mv"], ["fs", "read"],
    ["serve"], ["mcp"], ["remote-helper"],
]

# What a front end would answer if it started serving: a JSON-RPC request on its input.
A_REQUEST = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                        "params": {"protocolVersion": "2025-06-18", "capabilities": {}}}) + "\n"

BACKENDS = {"bwrap": bwrap_works(), "landlock": landlock_abi() > 0}


def version_line():
    with open(os.path.join(os.path.dirname(__file__), "..", "..", "meson.build"), encoding="utf-8") as handle:
        for line in handle:
            if line.strip().startswith("version :"):
                return "dsh-sandbox " + line.split("'")[1] + "\n"
    raise AssertionError("meson.build names no version")


class Program(unittest.TestCase):
    """A HOME with XDG directories and a state directory of its own, and an empty directory to run in."""

    def setUp(self):
        os.makedirs(SCRATCH, exist_ok=True)
        self.home = os.path.realpath(tempfile.mkdtemp(prefix="livability-service-", dir=SCRATCH))
        self.addCleanup(shutil.rmtree, self.home, True)
        self.here = os.path.join(self.home, "here")
        os.makedirs(self.here)
        self.env = dict(os.environ)
        self.env.pop("DSH_SANDBOX_CONFIG", None)
        self.env.update({"HOME": self.home,
                         "DSH_SANDBOX_STATE_DIR": os.path.join(self.home, "state"),
                         "XDG_STATE_HOME": os.path.join(self.home, "xdg-state"),
                         "XDG_CONFIG_HOME": os.path.join(self.home, "config"),
                         "XDG_CACHE_HOME": os.path.join(self.home, "cache")})

    def dsh(self, *arguments, stdin=""):
        return subprocess.run([BIN, *arguments], input=stdin, capture_output=True, text=True, check=False,
                              cwd=self.here, env=self.env, timeout=PATIENCE)

    def left_behind(self):
        """Everything under HOME but the empty directory the command ran in."""
        found = []
        for directory, subdirs, names in os.walk(self.home):
            found += [os.path.relpath(os.path.join(directory, name), self.home) for name in subdirs + names]
        return sorted(path for path in found if path != "here")

    def test_every_command_answers_help_and_version_and_does_nothing_else(self):
        version = version_line()
        for path in COMMAND_PATHS:
            for option in ("--help", "-h", "--version"):
                with self.subTest(command=" ".join(path + [option])):
                    result = self.dsh(*path, option, stdin=A_REQUEST)
                    self.assertEqual(result.returncode, 0, result.stderr)
                    self.assertEqual(result.stderr, "")
                    if option == "--version":
                        self.assertEqual(result.stdout, version)
                    else:
                        self.assertTrue(result.stdout.startswith("Usage: dsh-sandbox"), result.stdout[:200])
                    self.assertNotIn('"jsonrpc"', result.stdout, "it answered the request: it served")
                    self.assertEqual(self.left_behind(), [], "it did more than answer")

    def test_an_unknown_option_is_still_a_usage_error(self):
        for path in COMMAND_PATHS:
            with self.subTest(command=" ".join(path + ["--frobnicate"])):
                result = self.dsh(*path, "--frobnicate", stdin=A_REQUEST)
                self.assertEqual(result.returncode, 2, result.stderr)
                self.assertEqual(result.stdout, "")
                self.assertEqual(result.stderr.count("\n"), 1, result.stderr)
                self.assertRegex(result.stderr, r'^dsh-sandbox: usage error: .*unknown option "--frobnicate"')
                self.assertEqual(self.left_behind(), [])

    def test_run_ends_with_the_commands_own_exit_status(self):
        usable = [name for name, works in BACKENDS.items() if works]
        if not usable:
            self.skipTest("neither bwrap nor Landlock works on this host")
        # workspace-write: run spawns the command and stands in for it, so its status passes through run's end.
        for backend in usable:
            for status in (0, 1, 2, 7, 125, 126, 127, 200, 255):
                with self.subTest(backend=backend, status=status):
                    result = self.dsh("run", "--backend", backend, "--mode", "workspace-write", "--root", self.here,
                                      "--", "sh", "-c", f"echo ran >ran && exit {status}")
                    self.assertEqual(result.returncode, status, result.stderr)
                    with open(os.path.join(self.here, "ran"), encoding="utf-8") as handle:
                        self.assertEqual(handle.read(), "ran\n")
                    os.unlink(os.path.join(self.here, "ran"))


if __name__ == "__main__":
    sys.exit(run_suite(__name__))
