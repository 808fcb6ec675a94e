#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Nothing outlives its call (issue 19, item 5): a process a Landlock workspace-write call started ends with it.

Each case runs a real confined call — through `dsh-sandbox run`, the landlock-run launcher and the bash tool
(`dsh-sandbox bash`) — whose command leaves a process behind that would write the workspace after the call
returned: with setsid, a double fork, nohup, or one that stops itself first.  Every process of the call carries
a marker in its environment.  Once the call has returned, no process with that marker may be left in /proc, and
after a wait longer than the leftover's own sleep its file must be absent on disk.

Output: unittest's verbose form, a "# SKIP: case: reason" line per skip, then "N passed, N failed, N skipped".
"""
import os
import shutil
import signal
import subprocess
import sys
import time
import unittest
import uuid

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "livability"))
import livability  # noqa: E402

BIN = livability.BIN
LANDLOCK_RUN = os.environ.get("LANDLOCK_RUN_BIN", "")
# The leftover's own delay before it writes, and how much longer the test waits before it looks at the disk.
LEFTOVER_SLEEP = 1
LOOK_AFTER = LEFTOVER_SLEEP + 1.5
LONG_SLEEP = 3
PATIENCE = 30

# Each shape leaves one process behind that writes FILE once it runs on, by a different way out of the call.  The
# leftover says it is out (READY) and the command waits for that before it ends: the call returns only once the
# leftover has left the command's process group and session, never while it is still on its way out.
SHAPES = {
    "setsid": "setsid sh -c 'echo $$ > {ready}; sleep {sleep}; echo x >> {file}' &",
    # The daemon's way: a subshell starts it in a session of its own and exits at once, orphaning it.
    "double_fork": "( setsid sh -c 'echo $$ > {ready}; sleep {sleep}; echo x >> {file}' & ) ; :",
    "nohup": "nohup setsid sh -c 'echo $$ > {ready}; sleep {sleep}; echo x >> {file}' >{file}.out 2>&1 &",
    # Stopped, it would write on a SIGCONT; the test sends one to whatever is left of the call.
    "stopped": "setsid sh -c 'echo $$ > {ready}; kill -STOP $$; echo x >> {file}' &",
    # It then tries to SIGKILL the process that would end it (its parent: the stand-in, or landlock-run); Landlock's
    # signal scope (ABI 6) refuses that.
    "kills_stand_in": "setsid sh -c 'echo $$ > {ready}; sleep {sleep}; echo x >> {file}' &",
}
AFTER_READY = {"kills_stand_in": "kill -KILL $PPID 2>/dev/null; :"}
WAIT_READY = "while [ ! -s {ready} ]; do sleep 0.01; done"


def processes_with_marker(marker):
    """The pids whose environment carries `marker` (zombies have none, and are gone once reaped)."""
    needle = f"DSH_LEFTOVER_MARKER={marker}".encode()
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as environ:
                if needle in environ.read().split(b"\0"):
                    found.append(int(name))
        except OSError:
            continue
    return found


class Leftovers(unittest.TestCase):
    def setUp(self):
        if livability.landlock_abi() < 1:
            self.skipTest("this kernel has no Landlock")
        self.workspace = os.path.join(livability.SCRATCH, f"reach-leftovers-{uuid.uuid4().hex[:12]}")
        os.makedirs(self.workspace)
        self.marker = uuid.uuid4().hex
        self.environment = dict(os.environ, DSH_LEFTOVER_MARKER=self.marker)

    def tearDown(self):
        for pid in processes_with_marker(self.marker):
            os.kill(pid, signal.SIGKILL)   # a failing case must not leave its leftover running
        shutil.rmtree(self.workspace, ignore_errors=True)

    def surface_argv(self, surface, script):
        if surface == "run":
            return [BIN, "run", "--backend", "landlock", "--mode", "workspace-write", "--", "sh", "-c", script]
        if surface == "landlock_run":
            if not LANDLOCK_RUN:
                self.skipTest("LANDLOCK_RUN_BIN is not set")
            return [LANDLOCK_RUN, "--ro", "/", "--rw", self.workspace, "--", "sh", "-c", script]
        return [BIN, "bash", "--backend", "landlock", "--mode", "workspace-write", "--", script]

    def call(self, surface, script):
        return subprocess.run(self.surface_argv(surface, script), cwd=self.workspace, env=self.environment,
                              stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=PATIENCE,
                              check=False)

    def check_nothing_outlives(self, surface, shape):
        if shape == "kills_stand_in" and livability.landlock_abi() < 6:
            self.skipTest("below Landlock ABI 6 the domain has no signal scope: the command can kill its stand-in")
        leftover = os.path.join(self.workspace, "leftover")
        ready = os.path.join(self.workspace, "ready")
        script = "\n".join([SHAPES[shape].format(sleep=LEFTOVER_SLEEP, file=leftover, ready=ready),
                            WAIT_READY.format(ready=ready), AFTER_READY.get(shape, ":"), "echo started"])
        outcome = self.call(surface, script)
        self.assertEqual(outcome.returncode, 0, outcome.stderr)
        self.assertIn("started", outcome.stdout)
        left = processes_with_marker(self.marker)
        for pid in left:
            try:
                os.kill(pid, signal.SIGCONT)   # a stopped leftover would now write
            except ProcessLookupError:
                pass
        self.assertEqual(left, [], "a process of the call outlived it")
        # Had one escaped the /proc look, it would write within its sleep; a stopped one would on SIGCONT.
        time.sleep(LOOK_AFTER)
        self.assertFalse(os.path.exists(leftover), "a leftover wrote the workspace after its call returned")

    def test_call_children_run_while_the_call_does(self):
        # A process started in the background is not killed while its call still runs: it writes, the call
        # waits for the file, and only then returns.
        during = os.path.join(self.workspace, "during")
        script = f"setsid sh -c 'echo y > {during}' & while [ ! -s {during} ]; do sleep 0.01; done; echo done"
        for surface in ("run", "landlock_run", "bash"):
            os.unlink(during) if os.path.exists(during) else None
            outcome = self.call(surface, script)
            self.assertEqual(outcome.returncode, 0, f"{surface}: {outcome.stderr}")
            self.assertTrue(os.path.exists(during), surface)

    def start_leftover_then_hang(self):
        ready = os.path.join(self.workspace, "ready")
        leftover = os.path.join(self.workspace, "leftover")
        # It sleeps longer than the bash tool's timeout below, so only a leftover that outlived its call writes.
        script = "\n".join([SHAPES["setsid"].format(sleep=LONG_SLEEP, file=leftover, ready=ready),
                            WAIT_READY.format(ready=ready), "echo started", "exec sleep 600"])
        return script, leftover

    def check_ended(self, leftover):
        # The stand-in (run's environment, so the marker too) may still be on its way out once the last process
        # holding the pipe has died: wait for the call's processes to be gone, boundedly, then judge.
        deadline = time.monotonic() + 10
        while processes_with_marker(self.marker) and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertEqual(processes_with_marker(self.marker), [], "a process of the call outlived it")
        time.sleep(LONG_SLEEP + 1.5)
        self.assertFalse(os.path.exists(leftover), "a leftover wrote the workspace after its call returned")

    def test_bash_timeout_ends_the_leftovers_too(self):
        # The timeout's SIGKILL is the stand-in's end request: the command and what it left go, not the stand-in first.
        script, leftover = self.start_leftover_then_hang()
        outcome = subprocess.run([BIN, "bash", "--backend", "landlock", "--mode", "workspace-write", "--timeout",
                                  "500", "--", script], cwd=self.workspace, env=self.environment,
                                 stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=PATIENCE,
                                 check=False)
        self.assertIn("started", outcome.stdout)
        self.assertNotEqual(outcome.returncode, 0)
        self.check_ended(leftover)

    def test_run_terminated_ends_the_leftovers_too(self):
        # SIGTERM to run goes on to the command; once it dies of it, its leftovers are ended before run ends.
        script, leftover = self.start_leftover_then_hang()
        call = subprocess.Popen(self.surface_argv("run", script), cwd=self.workspace, env=self.environment,
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True)
        self.assertEqual(call.stdout.readline().strip(), "started")
        call.send_signal(signal.SIGTERM)
        self.assertEqual(call.wait(timeout=PATIENCE), -signal.SIGTERM)
        call.stdout.close()
        self.check_ended(leftover)

    def test_run_killed_ends_the_leftovers_too(self):
        # SIGKILL to run cannot be passed on: the stand-in's death signal (run asks die_with_parent) is the end
        # request, so the command and what it left go with run.
        script, leftover = self.start_leftover_then_hang()
        call = subprocess.Popen(self.surface_argv("run", script), cwd=self.workspace, env=self.environment,
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True)
        self.assertEqual(call.stdout.readline().strip(), "started")
        call.kill()
        self.assertEqual(call.wait(timeout=PATIENCE), -signal.SIGKILL)
        # The stand-in ends the call after run is gone: its pipe's end of file says the last process has ended.
        self.assertEqual(call.stdout.read(), "")
        call.stdout.close()
        self.check_ended(leftover)

    def test_exit_status_and_signal_pass_through(self):
        for surface in ("run", "landlock_run"):
            self.assertEqual(self.call(surface, "setsid sleep 30 & exit 7").returncode, 7, surface)
            self.assertEqual(self.call(surface, "setsid sleep 30 & kill -TERM $$").returncode, -signal.SIGTERM,
                             surface)
        self.assertEqual(processes_with_marker(self.marker), [])


def add_case(surface, shape):
    def case(self):
        self.check_nothing_outlives(surface, shape)
    case.__name__ = f"test_{surface}_{shape}"
    setattr(Leftovers, case.__name__, case)


for each_surface in ("run", "landlock_run", "bash"):
    for each_shape in SHAPES:
        add_case(each_surface, each_shape)


if __name__ == "__main__":
    sys.exit(livability.run_suite(__name__))
