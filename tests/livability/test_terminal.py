#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A person at a terminal: `dsh-sandbox run` in the foreground of a real pty, under bwrap.

The command gets a pty of its own as its controlling terminal, which `run` serves: an interactive
shell inside keeps job control (background jobs, Ctrl-Z stopping a job, Ctrl-C reaching the
foreground job, the shell itself surviving both), Ctrl-C reaches a plain command's own handler,
and nothing of the user's terminal, session or process groups is in the command's reach: a signal
to its group, the terminal's foreground, a line discipline, keystrokes pushed in (TIOCSTI).

Each case forks a pty (Python's pty module), runs the built $DSH_SANDBOX_BIN in it, types into it
and reads the screen.  Output is unittest's verbose form, one line per case, then
"N passed, N failed, N skipped".
"""
import os
import pty
import select
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from livability import BIN, SCRATCH, bwrap_works, landlock_abi, run_suite  # noqa: E402

TIOCSTI_PROBE = os.environ.get("TIOCSTI_PROBE_BIN", "")
PROMPT = b"PROMPT$ "


BWRAP = bwrap_works()


class Terminal:
    """`dsh-sandbox run --backend bwrap ARGV` as the foreground job of a fresh pty's session."""

    def __init__(self, argv, home, backend="bwrap", shell_line=None, mode=("--mode", "read-only")):
        """Runs `dsh-sandbox run ARGV`, or with `shell_line` a /bin/sh line that runs it (as $RUN)."""
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            os.environ.update(PS1=PROMPT.decode(), HOME=home, XDG_STATE_HOME=home + "/state",
                              XDG_CACHE_HOME=home + "/cache", XDG_CONFIG_HOME=home + "/config", TERM="dumb")
            run = [BIN, "run", "--backend", backend, *mode, "--"]
            if shell_line is not None:
                os.environ["RUN"] = " ".join(run)
                os.execv("/bin/sh", ["sh", "-c", shell_line])
            os.execv(BIN, run + argv)
        self.screen = b""

    def read_until(self, token, seconds=20):
        """Reads the screen until `token` appears after what was read before; returns what came."""
        start = len(self.screen)
        deadline = time.monotonic() + seconds
        while token not in self.screen[start:] and time.monotonic() < deadline:
            ready, _, _ = select.select([self.fd], [], [], 0.2)
            if not ready:
                continue
            try:
                data = os.read(self.fd, 4096)
            except OSError:
                break
            if not data:
                break
            self.screen += data
        return self.screen[start:]

    def type(self, text):
        os.write(self.fd, text)

    def finish(self, seconds=20):
        """The exit status of `dsh-sandbox run`, as a shell would report it; kills it if it hangs."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self.read_until(b"\0", 0.2)
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid == self.pid:
                os.close(self.fd)
                return os.waitstatus_to_exitcode(status)
        os.kill(self.pid, 9)
        os.waitpid(self.pid, 0)
        os.close(self.fd)
        raise AssertionError("dsh-sandbox run did not end; screen: %r" % self.screen)


@unittest.skipUnless(BWRAP, "bwrap cannot make a sandbox on this host")
class SharedTerminal(unittest.TestCase):
    def setUp(self):
        os.makedirs(SCRATCH, exist_ok=True)
        self.home = tempfile.mkdtemp(dir=SCRATCH, prefix="terminal-")

    def tearDown(self):
        subprocess.run(["rm", "-rf", self.home], check=False)

    def test_interactive_shell_keeps_job_control(self):
        terminal = Terminal(["bash", "--norc", "--noprofile", "-i"], self.home)
        started = terminal.read_until(PROMPT)
        self.assertIn(PROMPT, started)
        self.assertNotIn(b"no job control", started)
        self.assertNotIn(b"cannot set terminal process group", started)
        terminal.type(b"sleep 100 &\n")
        terminal.read_until(PROMPT)
        terminal.type(b"jobs\n")
        self.assertRegex(terminal.read_until(PROMPT), rb"\[1\]\+ +Running +sleep 100 &")
        # Ctrl-Z stops the foreground job, and the shell takes the terminal back.
        terminal.type(b"sleep 50\n")
        time.sleep(0.5)
        terminal.type(b"\x1a")
        self.assertRegex(terminal.read_until(PROMPT), rb"\[2\]\+ +Stopped +sleep 50")
        # Ctrl-C ends the foreground job, not the shell (nor bwrap under it).
        terminal.type(b"sleep 60\n")
        time.sleep(0.5)
        terminal.type(b"\x03")
        terminal.read_until(PROMPT)
        terminal.type(b"echo alive-$((6*7))\n")
        self.assertIn(b"alive-42", terminal.read_until(PROMPT))
        terminal.type(b"kill -9 %1 %2; sleep 0.3; jobs\n")
        terminal.read_until(PROMPT)
        terminal.type(b"exit 7\n")
        self.assertEqual(terminal.finish(), 7, terminal.screen)

    def test_landlock_workspace_write_shell_keeps_job_control_on_its_own_pty(self):
        # Landlock workspace-write spawns the command too (its supervisor stays): the same pty of its own.
        if landlock_abi() == 0:
            self.skipTest("the kernel does not enforce Landlock")
        os.makedirs(os.path.join(self.home, "ws"))
        terminal = Terminal(["bash", "--norc", "--noprofile", "-i"], self.home, backend="landlock",
                            mode=("--mode", "workspace-write", "--root", os.path.join(self.home, "ws")))
        started = terminal.read_until(PROMPT)
        self.assertIn(PROMPT, started)
        self.assertNotIn(b"no job control", started)
        terminal.type(b"sleep 100 &\n")
        terminal.read_until(PROMPT)
        terminal.type(b"jobs\n")
        self.assertRegex(terminal.read_until(PROMPT), rb"\[1\]\+ +Running +sleep 100 &")
        terminal.type(b"kill -9 %1; sleep 0.3; jobs\n")
        terminal.read_until(PROMPT)
        terminal.type(b"exit 3\n")
        self.assertEqual(terminal.finish(), 3, terminal.screen)

    def test_ctrl_c_reaches_the_commands_own_handler(self):
        terminal = Terminal(["sh", "-c", "trap 'echo caught-int; exit 5' INT; echo ready; "
                             "while :; do sleep 0.1; done"], self.home)
        self.assertIn(b"ready", terminal.read_until(b"ready"))
        time.sleep(0.3)
        terminal.type(b"\x03")
        self.assertIn(b"caught-int", terminal.read_until(b"caught-int"))
        self.assertEqual(terminal.finish(), 5, terminal.screen)

    def test_the_command_signals_nothing_outside_its_sandbox(self):
        # The shell that ran `run` shares run's process group: kill(0) inside must not reach it (it would,
        # were the command in that group: a pid namespace does not stop a signal to one's own group).
        terminal = Terminal([], self.home, shell_line='$RUN sh -c "kill -KILL 0"; echo "survived $?"')
        self.assertEqual(terminal.finish(), 0, terminal.screen)
        self.assertIn(b"survived 137", terminal.screen)

    def test_the_command_cannot_take_the_users_terminal(self):
        # A confined process that moves to a group of its own and makes it the foreground of its terminal
        # does so on its own pty: the user's terminal keeps the group that ran `run`.
        thief = ("import os, signal\n"
                 "signal.signal(signal.SIGTTOU, signal.SIG_IGN)\n"
                 "pid = os.fork()\n"
                 "if pid == 0:\n"
                 "    os.setpgid(0, 0)\n"
                 "    os.tcsetpgrp(0, os.getpgrp())\n"
                 "    print('took its own', flush=True)\n"
                 "    os._exit(0)\n"
                 "os.waitpid(pid, 0)\n")
        script = os.path.join(self.home, "thief.py")
        with open(script, "w", encoding="utf-8") as handle:
            handle.write(thief)
        terminal = Terminal([], self.home, shell_line=(
            f'$RUN python3 {script}; '
            'python3 -c "import os; print(\'foreground is ours\', os.tcgetpgrp(0) == os.getpgrp())"'))
        self.assertEqual(terminal.finish(), 0, terminal.screen)
        self.assertIn(b"took its own", terminal.screen)
        self.assertIn(b"foreground is ours True", terminal.screen)

    @unittest.skipUnless(TIOCSTI_PROBE and os.access(TIOCSTI_PROBE, os.X_OK), "no TIOCSTI_PROBE_BIN")
    def test_no_line_discipline_is_set_on_the_terminal(self):
        # TIOCSETD on an inherited terminal outlives the call (N_NULL would leave it dead): refused, both backends.
        for backend in ("bwrap", "landlock"):
            with self.subTest(backend=backend):
                terminal = Terminal([TIOCSTI_PROBE, "setd"], self.home, backend=backend)
                terminal.read_until(b"\n")
                self.assertEqual(terminal.finish(), 0, terminal.screen)
                self.assertIn(b"EPERM", terminal.screen)
                self.assertNotIn(b"set", terminal.screen.replace(b"setd", b""))

    @unittest.skipUnless(TIOCSTI_PROBE and os.access(TIOCSTI_PROBE, os.X_OK), "no TIOCSTI_PROBE_BIN")
    def test_tiocsti_refused_on_the_shared_terminal(self):
        # The probe's stdout is the pty, now the command's controlling terminal: without the filter the
        # kernel would push a keystroke into it (uid 0 may; a dropped CAP_SYS_ADMIN still may for one's own).
        terminal = Terminal([TIOCSTI_PROBE], self.home)
        terminal.read_until(b"\n")
        self.assertEqual(terminal.finish(), 0, terminal.screen)
        self.assertIn(b"EPERM", terminal.screen)
        self.assertNotIn(b"injected", terminal.screen)


if __name__ == "__main__":
    sys.exit(run_suite(__name__))
