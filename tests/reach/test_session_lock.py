#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The session log cannot be held hostage (issue 19, item 6).

A process that holds flock on a session's log — outside the sandbox, or a confined command of any mode, which can
open the log read-only — makes `dsh-sandbox session mode ID read-only` fail within the bound (set small here with
DSH_SANDBOX_SESSION_LOCK_TIMEOUT_MS) with one line naming the holder's pid, exit status 1, and the log unchanged
byte for byte.  Once the holder has ended, the same command succeeds.  The holder signals "locked" on its stdout
(an event, never a delay) and holds until its stdin closes.

Output: unittest's verbose form, a "# SKIP: case: reason" line per skip, then "N passed, N failed, N skipped".
"""
import os
import re
import shutil
import subprocess
import sys
import unittest
import uuid

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "livability"))
import livability  # noqa: E402

BIN = livability.BIN
PATIENCE = 60
BOUND_MS = "300"
HOLD = "echo locked; read gate"


def environ_has(pid, marker):
    try:
        with open(f"/proc/{pid}/environ", "rb") as environ:
            return f"DSH_LOCK_MARKER={marker}".encode() in environ.read().split(b"\0")
    except OSError:
        return False


class SessionLock(unittest.TestCase):
    def setUp(self):
        self.base = os.path.join(livability.SCRATCH, f"reach-lock-{uuid.uuid4().hex[:12]}")
        self.workspace = os.path.join(self.base, "ws")
        os.makedirs(self.workspace)
        self.marker = uuid.uuid4().hex
        self.environment = dict(os.environ, DSH_SANDBOX_STATE_DIR=os.path.join(self.base, "state"),
                                DSH_LOCK_MARKER=self.marker)
        created = self.dsh("session", "new")
        self.assertEqual(created.returncode, 0, created.stderr)
        self.session = created.stdout.strip()
        self.log = os.path.join(self.base, "state", f"{self.session}.jsonl")
        self.assertTrue(os.path.isfile(self.log), self.log)
        self.holder = None

    def tearDown(self):
        if self.holder and self.holder.poll() is None:
            self.holder.kill()
            self.holder.wait()
        shutil.rmtree(self.base, ignore_errors=True)

    def dsh(self, *arguments, bound=None):
        environment = dict(self.environment)
        if bound:
            environment["DSH_SANDBOX_SESSION_LOCK_TIMEOUT_MS"] = bound
        return subprocess.run([BIN, *arguments], cwd=self.workspace, env=environment, stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=PATIENCE, check=False)

    def hold(self, argv):
        """Starts `argv` (which takes a shared flock on the log and prints "locked"), returns once it holds."""
        self.holder = subprocess.Popen(argv, cwd=self.workspace, env=self.environment, stdin=subprocess.PIPE,
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.holder.stdout.readline()
        if line.strip() != "locked":
            self.holder.kill()
            self.fail(f"the holder did not take the lock: {line!r} {self.holder.stderr.read()!r}")

    def release(self):
        self.holder.stdin.close()
        self.holder.wait(timeout=PATIENCE)

    def check_hostage_refused_then_free(self, holder_is):
        before = open(self.log, "rb").read()
        refused = self.dsh("session", "mode", self.session, "read-only", bound=BOUND_MS)
        self.assertEqual(refused.returncode, 1, refused.stderr)
        lines = refused.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, refused.stderr)
        match = re.search(r"is locked by process (\d+)", lines[0])
        self.assertIsNotNone(match, lines[0])
        self.assertIn(f"not released within {BOUND_MS} ms; nothing was written", lines[0])
        self.assertTrue(holder_is(int(match.group(1))), f"the pid named is not the holder's: {lines[0]}")
        self.assertEqual(open(self.log, "rb").read(), before, "a refused switch changed the log")
        self.release()
        switched = self.dsh("session", "mode", self.session, "read-only", bound=BOUND_MS)
        self.assertEqual(switched.returncode, 0, switched.stderr)
        shown = self.dsh("session", "show", self.session)
        self.assertIn("effective mode: read-only", shown.stdout)

    def test_holder_outside_the_sandbox(self):
        self.hold(["flock", "-s", self.log, "sh", "-c", HOLD])
        self.check_hostage_refused_then_free(lambda pid: pid == self.holder.pid)

    def confined_holder(self, backend, mode):
        self.hold([BIN, "run", "--backend", backend, "--mode", mode, "--", "flock", "-s", self.log, "sh", "-c",
                   HOLD])
        # The pid /proc/locks names is the confined flock's, a process of this call (the marker is in its environment).
        self.check_hostage_refused_then_free(lambda pid: environ_has(pid, self.marker))

    def test_holder_confined_landlock_read_only(self):
        if livability.landlock_abi() < 1:
            self.skipTest("this kernel has no Landlock")
        self.confined_holder("landlock", "read-only")

    def test_holder_confined_landlock_workspace_write(self):
        if livability.landlock_abi() < 1:
            self.skipTest("this kernel has no Landlock")
        self.confined_holder("landlock", "workspace-write")

    def test_bwrap_hides_the_store(self):
        # Under bwrap the session store is one of the sandbox's hidden directories: nothing to open, nothing to lock.
        if not livability.bwrap_works():
            self.skipTest("bwrap cannot make a sandbox on this host")
        for mode in ("read-only", "workspace-write"):
            with self.subTest(mode=mode):
                looked = subprocess.run([BIN, "run", "--backend", "bwrap", "--mode", mode, "--root", self.workspace,
                                         "--", "sh", "-c", 'ls -A "$1"; flock -n -s "$2" true; echo "flock $?"', "sh",
                                         os.path.dirname(self.log), self.log],
                                        cwd=self.workspace, env=self.environment, stdin=subprocess.DEVNULL,
                                        capture_output=True, text=True, timeout=PATIENCE, check=False)
                self.assertEqual(looked.returncode, 0, looked.stderr)
                # An empty directory (ls prints nothing), and no log to open (flock(1): 73, cannot open or create).
                self.assertEqual(looked.stdout.splitlines(), ["flock 73"], looked.stdout + looked.stderr)
                switched = self.dsh("session", "mode", self.session, "workspace-write", bound=BOUND_MS)
                self.assertEqual(switched.returncode, 0, switched.stderr)

    def test_free_lock_switches_at_once(self):
        switched = self.dsh("session", "mode", self.session, "workspace-write", bound=BOUND_MS)
        self.assertEqual(switched.returncode, 0, switched.stderr)
        self.assertIn('"mode":"workspace-write"', open(self.log).read())


if __name__ == "__main__":
    sys.exit(livability.run_suite(__name__))
