#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The reach check of bench/floor.bench.sh, as a test (issue 24), against a real sshd.

After a `--remote` call leaves its shared connection up, a confined `dsh-sandbox run` on each backend
(read-only, and workspace-write with the runtime directory as its root) tries every unix socket under
$XDG_RUNTIME_DIR/dsh-sandbox, by path and by other names for it, with a raw connect and with
`ssh -o ControlPath=SOCK ... touch MARKER` (tests/remote/control_reach.py).  No connect may succeed and
no marker may appear on disk; the master must still answer from outside.  A second case runs the same
check through a stand-in "run" that confines nothing, which must be found REACHABLE: the check can
see a hole.  Nothing here is timed.
"""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "livability"))
import control_reach  # noqa: E402
import sshd_fixture  # noqa: E402
from livability import BIN, SCRATCH, bwrap_works, landlock_abi, run_suite  # noqa: E402

SERVER = None
SETUP_SKIP = None


def setUpModule():
    global SERVER, SETUP_SKIP
    try:
        SERVER = sshd_fixture.SshServer(BIN)
    except sshd_fixture.SkipTest as reason:
        SETUP_SKIP = str(reason)


def tearDownModule():
    if SERVER:
        SERVER.close()


class ControlReach(unittest.TestCase):
    def setUp(self):
        if SETUP_SKIP:
            self.skipTest(SETUP_SKIP)
        os.makedirs(SCRATCH, exist_ok=True)
        self.top = tempfile.mkdtemp(prefix="control-reach-", dir=SCRATCH)
        # Short: the control socket's path must fit a unix socket name.
        self.runtime_dir = tempfile.mkdtemp(prefix="dshr", dir="/var/tmp")
        config = os.path.join(self.top, "config.json")
        with open(config, "w") as handle:
            handle.write('{"sshCommand": ["ssh", "-F", "%s"], "remoteProgram": "%s"}'
                         % (SERVER.ssh_config, SERVER.remote_program))
        self.env = dict(os.environ, DSH_SANDBOX_CONFIG=config, XDG_RUNTIME_DIR=self.runtime_dir,
                        XDG_STATE_HOME=os.path.join(self.top, "state"),
                        XDG_CACHE_HOME=os.path.join(self.top, "cache"),
                        XDG_CONFIG_HOME=os.path.join(self.top, "config"))
        call = subprocess.run([BIN, "run", "--remote", "remote-test", "--", "true"], capture_output=True,
                              text=True, env=self.env, stdin=subprocess.DEVNULL,
                              timeout=control_reach.PATIENCE, check=False)
        self.assertEqual(call.returncode, 0, call.stderr)

    def tearDown(self):
        SERVER.stop_shared_connections(self.runtime_dir)
        shutil.rmtree(self.runtime_dir, ignore_errors=True)
        shutil.rmtree(self.top, ignore_errors=True)

    def backends(self):
        found = (["bwrap"] if bwrap_works() else []) + (["landlock"] if landlock_abi() > 0 else [])
        if not found:
            self.skipTest("neither bwrap nor Landlock can confine a command here")
        return found

    def test_no_confined_command_reaches_the_shared_connection(self):
        not_run, holes = control_reach.reach_check(BIN, self.runtime_dir, self.top, self.backends(), self.env)
        self.assertEqual(holes, [], "REACHABLE")
        self.assertEqual(not_run, [], "the check proved nothing")

    def test_the_check_finds_a_command_that_is_not_confined(self):
        # A "run" that drops its options and runs the command as it is: every way must be found open.
        unconfined = os.path.join(self.top, "unconfined-run")
        with open(unconfined, "w") as handle:
            handle.write('#!/bin/sh\nwhile [ "$1" != -- ]; do shift; done\nshift\nexec "$@"\n')
        os.chmod(unconfined, 0o755)
        not_run, holes = control_reach.reach_check(unconfined, self.runtime_dir, self.top, ["bwrap"], self.env)
        self.assertEqual(not_run, [])
        for mode in ("read-only", "workspace-write"):
            self.assertTrue([hole for hole in holes if mode in hole and "connected to" in hole], holes)
            self.assertTrue([hole for hole in holes if mode in hole and "ran `touch`" in hole], holes)


if __name__ == "__main__":
    sys.exit(run_suite(__name__))
