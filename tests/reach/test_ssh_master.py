#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The sandbox's own ssh master is out of a confined command's reach (issue 19, item 3), with a real sshd.

While a `--remote` connection is shared (ControlPersist), its master listens on a control socket in the
sandbox's control directory ($XDG_RUNTIME_DIR/dsh-sandbox/ssh).  A read-only confined command, run through
`dsh-sandbox run` on each backend, asks that master `-O check`, `-O forward -L PATH:127.0.0.1:PORT` (the
unconfined master would create a socket file at PATH: outside every root, or in the control directory
under another destination's name, a planted "master" for the next call) and `-O exit`.  Each must fail,
judged on disk (no socket file at either PATH) and on the master (still up, asked from outside).

Under bwrap the control directory is hidden behind an empty read-only tmpfs.  Under Landlock only a
supervised pathname connect closes it: the case skips, saying so, while a pathname connect outside the
roots still succeeds there.

Output is unittest's verbose form, one line per case, then "N passed, N failed, N skipped".
"""
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "livability"))
sys.path.insert(0, os.path.join(HERE, "..", "remote"))
from livability import BIN, SCRATCH, bwrap_works, landlock_abi, run_suite  # noqa: E402
import sshd_fixture  # noqa: E402

PATIENCE = 120   # an upper bound for one command, never a measurement
SERVER = None
SETUP_SKIP = None

# What the confined command tries, each answer on a line of its own: `-F /dev/null`, so only -S names the master.
ATTEMPTS = r"""
ssh -F /dev/null -S "$1" -O check x 2>/dev/null; echo "check $?"
ssh -F /dev/null -S "$1" -O forward -L "$2:127.0.0.1:$4" x 2>/dev/null; echo "forward-outside $?"
ssh -F /dev/null -S "$1" -O forward -L "$3:127.0.0.1:$4" x 2>/dev/null; echo "forward-control $?"
ssh -F /dev/null -S "$1" -O exit x 2>/dev/null; echo "exit $?"
"""

def setUpModule():
    global SERVER, SETUP_SKIP
    try:
        SERVER = sshd_fixture.SshServer(BIN)
    except sshd_fixture.SkipTest as reason:
        SETUP_SKIP = str(reason)


def tearDownModule():
    if SERVER:
        SERVER.close()


class SharedMasterCase(unittest.TestCase):
    def setUp(self):
        if SETUP_SKIP:
            self.skipTest(SETUP_SKIP)
        os.makedirs(SCRATCH, exist_ok=True)
        self.top = tempfile.mkdtemp(prefix="reach-ssh-", dir=SCRATCH)
        self.workspace = os.path.join(self.top, "ws")
        self.outside = os.path.join(self.top, "outside")
        os.makedirs(self.workspace)
        os.makedirs(self.outside)
        # Short: the control socket's path must fit a unix socket name.
        self.runtime_dir = tempfile.mkdtemp(prefix="dshr", dir="/var/tmp")
        self.config = os.path.join(self.top, "config.json")
        with open(self.config, "w") as config:
            config.write('{"sshCommand": ["ssh", "-F", "%s"], "remoteProgram": "%s"}'
                         % (SERVER.ssh_config, SERVER.remote_program))

    def tearDown(self):
        SERVER.stop_shared_connections(self.runtime_dir)
        shutil.rmtree(self.runtime_dir, ignore_errors=True)
        shutil.rmtree(self.top, ignore_errors=True)

    def env(self):
        return dict(os.environ, DSH_SANDBOX_CONFIG=self.config, XDG_RUNTIME_DIR=self.runtime_dir,
                    DSH_SANDBOX_STATE_DIR=os.path.join(self.top, "state"))

    def dsh(self, *arguments):
        return subprocess.run([BIN, *arguments], capture_output=True, text=True, env=self.env(),
                              stdin=subprocess.DEVNULL, timeout=PATIENCE, check=False)

    def start_master(self):
        """A shared connection, as a `--remote` call leaves it; returns its control socket."""
        call = self.dsh("run", "--remote", "remote-test", "--mode", "read-only", "--root", self.workspace,
                        "--", "true")
        self.assertEqual(call.returncode, 0, call.stderr)
        control = os.path.join(self.runtime_dir, "dsh-sandbox", "ssh")
        # The master's socket; beside it the remote service's endpoint (<digest>.service), whose own
        # reach is tested in tests/remote (RemoteService).
        sockets = [os.path.join(control, name) for name in os.listdir(control)
                   if stat.S_ISSOCK(os.lstat(os.path.join(control, name)).st_mode) and not name.endswith(".service")]
        self.assertEqual(len(sockets), 1, sockets)
        self.assertTrue(self.master_answers(sockets[0]), "the master is not up: the case would prove nothing")
        return sockets[0]

    def master_answers(self, control_socket):
        check = subprocess.run(["ssh", "-F", "/dev/null", "-S", control_socket, "-O", "check", "x"],
                               capture_output=True, timeout=PATIENCE, check=False)
        return check.returncode == 0

    def assert_master_out_of_reach(self, backend):
        control_socket = self.start_master()
        outside = os.path.join(self.outside, "forwarded.sock")
        planted = os.path.join(os.path.dirname(control_socket), "0" * 40)
        attempt = self.dsh("run", "--backend", backend, "--mode", "read-only", "--root", self.workspace, "--",
                           "sh", "-c", ATTEMPTS, "sh", control_socket, outside, planted, str(SERVER.port))
        answers = dict(line.split() for line in attempt.stdout.splitlines() if line.strip())
        self.assertEqual(set(answers), {"check", "forward-outside", "forward-control", "exit"},
                         attempt.stdout + attempt.stderr)
        for request, status in answers.items():
            self.assertNotEqual(status, "0", f"{backend}: the master answered -O {request}")
        self.assertFalse(os.path.lexists(outside), f"{backend}: the master made a socket outside the roots")
        self.assertFalse(os.path.lexists(planted), f"{backend}: the master made a socket in the control directory")
        self.assertTrue(self.master_answers(control_socket), f"{backend}: the command ended the master")

    def test_bwrap_read_only_cannot_reach_the_master(self):
        if not bwrap_works():
            self.skipTest("bwrap cannot make a sandbox on this host")
        self.assert_master_out_of_reach("bwrap")

    def test_bwrap_hides_a_master_started_while_the_command_runs(self):
        # The control directory does not exist when the call starts: bwrap makes it first, so that the
        # tmpfs covers the directory a master started later creates (else it would show through "/").
        if not bwrap_works():
            self.skipTest("bwrap cannot make a sandbox on this host")
        control = os.path.join(self.runtime_dir, "dsh-sandbox", "ssh")
        self.assertFalse(os.path.exists(control))
        trigger = os.path.join(self.outside, "master-is-up")
        waiter = subprocess.Popen(
            [BIN, "run", "--backend", "bwrap", "--mode", "read-only", "--root", self.workspace, "--", "sh", "-c",
             'echo ready; while [ ! -s "$1" ]; do sleep 0.05; done; '
             'ssh -F /dev/null -S "$(cat "$1")" -O check x 2>/dev/null; echo "check $?"; '
             'ls -A "$2"; echo listed', "sh", trigger, control],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True, env=self.env())
        try:
            self.assertEqual(waiter.stdout.readline().strip(), "ready")
            control_socket = self.start_master()
            with open(trigger + ".new", "w") as handle:
                handle.write(control_socket)
            os.rename(trigger + ".new", trigger)
            output, errors = waiter.communicate(timeout=PATIENCE)
        finally:
            if waiter.poll() is None:
                waiter.kill()
                waiter.wait()
        lines = output.splitlines()
        self.assertIn("listed", lines, output + errors)
        self.assertNotEqual(lines[0], "check 0", "the master answered a command that started before it")
        self.assertEqual(lines[1], "listed", "the command saw the master's socket: " + output)
        self.assertTrue(self.master_answers(control_socket))

    def test_landlock_read_only_cannot_reach_the_master(self):
        if landlock_abi() == 0:
            self.skipTest("the kernel has no Landlock")
        self.assert_master_out_of_reach("landlock")


if __name__ == "__main__":
    sys.exit(run_suite(__name__))
