#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""One metadata supervisor on both backends (docs/supervisor.md), judged on disk and on the host's inodes.

Each case runs the built `dsh-sandbox run` ($DSH_SANDBOX_BIN) on the real kernel with real bwrap,
with a workspace of its own under $DSH_TEST_SCRATCH, as root, and looks at the host afterwards:

- bwrap binds the host's /dev/null, /dev/zero, /dev/urandom and /dev/tty into its /dev; a chmod,
  chown or touch of them inside (read-only and workspace-write) leaves the host's inode as it was
  (mode, owner, times, ctime), and the sink still works;
- under bwrap workspace-write a chmod in the workspace and in the session's /tmp is performed, one
  of a read-only path or of a protected subpath (.git/hooks) is refused and nothing changes;
- set-user-ID and set-group-ID bits, both backends, both modes: chmod, fchmod, fchmodat2 and
  creation (open with O_CREAT or O_TMPFILE, mknod) are refused (EPERM), and no file has the bit;
  openat2 is ENOSYS (its mode is behind a pointer);
- under an ancestor that holds a seccomp listener, bwrap workspace-write is refused with the
  reason and the command never runs; read-only still runs, its metadata refused by the kernel;
- an argv `confine` hands a harness runs with metadata refused everywhere, and says `partial`.

Output is unittest's verbose form on stdout, one line per case, then "N passed, N failed,
N skipped" (a "# SKIP: case: reason" line for each skip).
"""
import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "livability"))
from livability import BIN, SCRATCH, bwrap_works, landlock_abi, run_suite  # noqa: E402

PYTHON = sys.executable
# A bound on a run that hangs, never a measurement.
PATIENCE = 120
BWRAP = bwrap_works()
LANDLOCK = landlock_abi() > 0
DEVICE_NODES = ("/dev/null", "/dev/zero", "/dev/urandom", "/dev/tty")
SET_ID_BITS = stat.S_ISUID | stat.S_ISGID

# Every way a confined command could give a file a set-id bit; each prints "NAME ERRNO" (0: it worked).
SET_ID_PROBE = r"""
import ctypes, errno, os, stat, sys
libc = ctypes.CDLL(None, use_errno=True)
where = sys.argv[1]
def attempt(name, action):
    try:
        result = action()
        print(name, 0 if result is None or result >= 0 else ctypes.get_errno())
    except OSError as failure:
        print(name, failure.errno)
target = os.path.join(where, "plain")
with open(target, "w") as handle:
    handle.write("#!/bin/sh\n")
attempt("chmod", lambda: os.chmod(target, 0o4755))
attempt("chmod-setgid", lambda: os.chmod(target, 0o2755))
descriptor = os.open(target, os.O_RDONLY)
attempt("fchmod", lambda: os.fchmod(descriptor, 0o4755))
attempt("fchmodat2", lambda: libc.syscall(452, -100, target.encode(), 0o6755, 0))
attempt("open-creat", lambda: os.close(os.open(os.path.join(where, "created"), os.O_CREAT | os.O_WRONLY, 0o4755)))
attempt("openat-creat", lambda: os.close(os.open("created-at", os.O_CREAT | os.O_WRONLY, 0o2755,
                                                  dir_fd=os.open(where, os.O_RDONLY))))
attempt("tmpfile", lambda: os.close(os.open(where, os.O_TMPFILE | os.O_WRONLY, 0o4700)))
attempt("mknod", lambda: os.mknod(os.path.join(where, "node"), stat.S_IFREG | 0o4755))
attempt("openat2", lambda: libc.syscall(437, -100, b"/", None, 0))
attempt("chmod-plain", lambda: os.chmod(target, 0o700))
for name in sorted(os.listdir(where)):
    print("file", name, oct(os.lstat(os.path.join(where, name)).st_mode))
"""


def host_state(path):
    """What a metadata change would alter on the host's inode (ctime: any chmod, chown or utimes)."""
    status = os.stat(path)
    return (stat.S_IMODE(status.st_mode), status.st_uid, status.st_gid, status.st_mtime_ns, status.st_ctime_ns)


def run_tool(arguments, cwd, timeout=PATIENCE, env=None):
    return subprocess.run([BIN] + arguments, cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          env=env, check=False)


def outcomes(text):
    """The probe's "NAME ERRNO" lines as a dict."""
    found = {}
    for line in text.splitlines():
        words = line.split()
        if len(words) == 2 and words[1].lstrip("-").isdigit():
            found[words[0]] = int(words[1])
    return found


class Workspace(unittest.TestCase):
    def setUp(self):
        os.makedirs(SCRATCH, exist_ok=True)
        self.base = tempfile.mkdtemp(prefix="reach-supervisor-", dir=SCRATCH)
        self.workspace = os.path.join(self.base, "ws")
        self.outside = os.path.join(self.base, "outside")
        os.makedirs(os.path.join(self.workspace, ".git", "hooks"))
        os.makedirs(self.outside)
        self.hook = os.path.join(self.workspace, ".git", "hooks", "pre-commit")
        with open(self.hook, "w") as handle:
            handle.write("#!/bin/sh\n")
        os.chmod(self.hook, 0o644)
        with open(os.path.join(self.workspace, ".git", "config"), "w") as handle:
            handle.write("[core]\n")
        self.file = os.path.join(self.workspace, "file")
        self.outside_file = os.path.join(self.outside, "file")
        for path in (self.file, self.outside_file):
            with open(path, "w") as handle:
                handle.write("x\n")
            os.chmod(path, 0o644)

    def tearDown(self):
        shutil.rmtree(self.base, ignore_errors=True)

    def run_confined(self, backend, mode, command, env=None):
        return run_tool(["run", "--backend", backend, "--mode", mode, "--root", self.workspace, "--"] + command,
                        self.workspace, env=env)


@unittest.skipUnless(BWRAP, "bwrap cannot make a sandbox on this host")
class DeviceNodes(Workspace):
    """bwrap's /dev binds the host's nodes: their host inodes must not change."""

    SCRIPT = r"""
for node in /dev/null /dev/zero /dev/urandom /dev/tty; do
    chmod 0777 "$node"; echo "chmod $node $?"
    chown root:root "$node"; echo "chown $node $?"
    touch -d @0 "$node"; echo "touch $node $?"
done
echo sink > /dev/null && echo "sink $?"
head -c 4 /dev/zero | od -An -tx1 | tr -d ' \n'; echo
"""

    def check_mode(self, mode):
        before = {node: host_state(node) for node in DEVICE_NODES if os.path.exists(node)}
        try:
            result = self.run_confined("bwrap", mode, ["sh", "-c", self.SCRIPT])
        finally:
            after = {node: host_state(node) for node in before}
            for node, state in before.items():  # never leave the host broken, even when the test fails
                if after[node][0] != state[0]:
                    os.chmod(node, state[0])
                if after[node][3] != state[3]:
                    os.utime(node, ns=(state[3], state[3]))
        self.assertEqual(result.returncode, 0, result.stderr)
        for node in before:
            self.assertEqual(after[node], before[node], f"{mode}: the host's {node} changed")
        for line in result.stdout.splitlines():
            words = line.split()
            if words and words[0] in ("chmod", "chown", "touch") and words[1] in before:
                self.assertNotEqual(words[2], "0", f"{mode}: {line} reported success")
        self.assertIn("sink 0", result.stdout)
        self.assertIn("00000000", result.stdout)

    def test_read_only(self):
        self.check_mode("read-only")

    def test_workspace_write(self):
        self.check_mode("workspace-write")


# Reaches for bwrap's own init (pid 1 in the sandbox: the command's parent, which no filter governs and which
# still holds the caller's stdio): an attach, a read of its memory map, a write through its stdin.
INIT_REACH = r"""
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
print("attach", 0 if libc.ptrace(16, 1, None, None) == 0 else ctypes.get_errno())  # PTRACE_ATTACH
for name, action in (("maps", lambda: open("/proc/1/maps").read()),
                     ("stdin", lambda: open("/proc/1/fd/0", "a").write("through-init\n"))):
    try:
        action()
        print(name, 0)
    except OSError as failure:
        print(name, failure.errno)
"""


@unittest.skipUnless(BWRAP, "bwrap cannot make a sandbox on this host")
@unittest.skipUnless(LANDLOCK, "the kernel has no Landlock: bwrap reports its init within reach as partial")
class BwrapInit(Workspace):
    """bwrap's pid 1 is out of the command's reach: the command lives in a Landlock domain of its own."""

    def test_init_is_out_of_reach_in_both_modes(self):
        for mode in ("read-only", "workspace-write"):
            with self.subTest(mode=mode):
                before = host_state(self.outside_file)
                with open(self.outside_file) as stdin:  # read-only, outside every root
                    result = subprocess.run([BIN, "run", "--backend", "bwrap", "--mode", mode, "--root",
                                             self.workspace, "--", PYTHON, "-c", INIT_REACH],
                                            cwd=self.workspace, stdin=stdin, capture_output=True, text=True,
                                            timeout=PATIENCE, check=False)
                self.assertEqual(result.returncode, 0, result.stderr)
                reported = outcomes(result.stdout)
                for name in ("attach", "maps", "stdin"):
                    self.assertIn(reported.get(name), (1, 13), f"{mode} {name}: {result.stdout}")  # EPERM, EACCES
                with open(self.outside_file) as handle:
                    self.assertEqual(handle.read(), "x\n", "the read-only stdin was written through bwrap's init")
                self.assertEqual(host_state(self.outside_file), before)

    def test_the_domain_takes_no_rename_away(self):
        # A domain that did not handle REFER would refuse every rename across directories (EXDEV): git's
        # `branch -m`, mv between two directories of the workspace.
        os.makedirs(os.path.join(self.workspace, "a"))
        os.makedirs(os.path.join(self.workspace, "b"))
        result = self.run_confined("bwrap", "workspace-write", ["sh", "-c", "echo moved > a/f && mv a/f b/f"])
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(os.path.join(self.workspace, "b", "f")) as handle:
            self.assertEqual(handle.read(), "moved\n")


@unittest.skipUnless(BWRAP, "bwrap cannot make a sandbox on this host")
class BwrapWorkspaceWrite(Workspace):
    """Metadata under bwrap workspace-write: performed beneath the roots only, by the supervisor."""

    def test_workspace_and_tmp_performed(self):
        script = "chmod 600 file && touch -d @86400 file && echo x > /tmp/t && chmod 640 /tmp/t && stat -c %a /tmp/t"
        result = self.run_confined("bwrap", "workspace-write", ["sh", "-c", script])
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stdout.strip(), "640")
        status = os.stat(self.file)
        self.assertEqual(stat.S_IMODE(status.st_mode), 0o600)
        self.assertEqual(int(status.st_mtime), 86400)

    def test_outside_and_protected_refused(self):
        before = {path: host_state(path) for path in (self.outside_file, self.hook, self.outside)}
        script = (f"chmod 700 {self.outside_file}; echo outside $?; chmod 755 {self.hook}; echo hook $?; "
                  f"touch -d @0 {self.hook}; echo hook-times $?; chmod 700 {self.outside}; echo outside-dir $?")
        result = self.run_confined("bwrap", "workspace-write", ["sh", "-c", script])
        reported = outcomes(result.stdout)
        for name in ("outside", "hook", "hook-times", "outside-dir"):
            self.assertNotEqual(reported.get(name), 0, f"{name}: {result.stdout} {result.stderr}")
        for path, state in before.items():
            self.assertEqual(host_state(path), state, f"{path} changed")


class SetIdBits(Workspace):
    """No set-id bit, through any call, on either backend."""

    def check(self, backend, mode, where_in_sandbox, on_disk):
        result = self.run_confined(backend, mode, [PYTHON, "-c", SET_ID_PROBE, where_in_sandbox])
        self.assertEqual(result.returncode, 0, result.stderr)
        reported = outcomes(result.stdout)
        for name in ("chmod", "chmod-setgid", "fchmod", "fchmodat2", "open-creat", "openat-creat", "tmpfile",
                     "mknod"):
            self.assertEqual(reported.get(name), 1, f"{backend} {mode} {name}: {result.stdout}")  # EPERM
        self.assertEqual(reported.get("openat2"), 38, result.stdout)  # ENOSYS
        # A mode without those bits: performed beneath a root — bwrap's read-only /tmp, a tmpfs of the call's own,
        # is one (the linker's chmod +x works there); Landlock's read-only refuses every metadata change (EPERM).
        performed = mode == "workspace-write" or backend == "bwrap"
        self.assertEqual(reported.get("chmod-plain"), 0 if performed else 1, result.stdout)
        for line in result.stdout.splitlines():
            if line.startswith("file "):
                self.assertFalse(int(line.split()[2], 8) & SET_ID_BITS, f"{backend} {mode}: {line}")
        for directory in on_disk:
            for name in os.listdir(directory):
                mode_bits = os.lstat(os.path.join(directory, name)).st_mode
                self.assertFalse(mode_bits & SET_ID_BITS, f"{backend} {mode}: {name} has {oct(mode_bits)} on disk")

    @unittest.skipUnless(BWRAP, "bwrap cannot make a sandbox on this host")
    def test_bwrap_workspace_write(self):
        self.check("bwrap", "workspace-write", self.workspace, [self.workspace])

    @unittest.skipUnless(BWRAP, "bwrap cannot make a sandbox on this host")
    def test_bwrap_read_only(self):
        # Read-only writes nowhere on disk; its private /tmp is where a file can be made at all.
        self.check("bwrap", "read-only", "/tmp", [])

    @unittest.skipUnless(LANDLOCK, "the kernel has no Landlock")
    def test_landlock_workspace_write(self):
        self.check("landlock", "workspace-write", self.workspace, [self.workspace])


# Holds a seccomp listener (as a container runtime or an outer sandbox would), then runs its argv.
UNDER_A_LISTENER = r"""
import ctypes, subprocess, sys
libc = ctypes.CDLL(None, use_errno=True)
allow = (ctypes.c_uint16 * 4)(0x06, 0, 0x0000, 0x7fff)  # BPF_RET|BPF_K SECCOMP_RET_ALLOW (k in two halves)
class Program(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]
program = Program(1, ctypes.cast(allow, ctypes.c_void_p))
libc.prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS
listener = libc.syscall(317, 1, 8, ctypes.byref(program))  # seccomp(SET_MODE_FILTER, NEW_LISTENER)
if listener < 0:
    print("no listener", ctypes.get_errno())
    sys.exit(99)
sys.exit(subprocess.run(sys.argv[1:]).returncode)
"""


class UnderAnotherSupervisor(Workspace):
    def check_refused(self, backend, mode="workspace-write"):
        marker = os.path.join(self.workspace, "ran")
        command = [PYTHON, "-c", UNDER_A_LISTENER, BIN, "run", "--backend", backend, "--mode", mode,
                   "--root", self.workspace, "--", "touch", marker]
        result = subprocess.run(command, cwd=self.workspace, capture_output=True, text=True, timeout=PATIENCE,
                                check=False)
        self.assertEqual(result.returncode, 125, result.stdout + result.stderr)
        self.assertIn("SANDBOX_UNAVAILABLE", result.stderr)
        self.assertIn("another seccomp supervisor already watches this process", result.stderr)
        self.assertFalse(os.path.exists(marker), "the command ran")

    @unittest.skipUnless(BWRAP, "bwrap cannot make a sandbox on this host")
    def test_bwrap_workspace_write_refused_with_the_reason(self):
        self.check_refused("bwrap")

    @unittest.skipUnless(LANDLOCK, "the kernel has no Landlock")
    def test_landlock_workspace_write_refused_with_the_reason(self):
        self.check_refused("landlock")

    # Read-only has a supervisor too (it performs connect): refused there as well, never run with connect unanswered.
    @unittest.skipUnless(BWRAP, "bwrap cannot make a sandbox on this host")
    def test_bwrap_read_only_refused_with_the_reason(self):
        self.check_refused("bwrap", "read-only")

    @unittest.skipUnless(LANDLOCK, "the kernel has no Landlock")
    def test_landlock_read_only_refused_with_the_reason(self):
        self.check_refused("landlock", "read-only")


REFUSE_EXEC = os.environ.get("REFUSE_EXEC_BIN", "")
EXEC_HELPER = os.path.join(os.path.dirname(BIN), "dsh-sandbox-exec")


@unittest.skipUnless(os.access(EXEC_HELPER, os.X_OK), "no dsh-sandbox-exec beside the tool")
class ListenerHandOver(Workspace):
    """dsh-sandbox-exec execs the command only once a supervisor acknowledged the listener."""

    def run_helper(self, answer):
        # The command shows it ran on stdout, not in a file: a write-intent open would wait on the listener,
        # which nobody serves here (the filter sends every write-intent call to the supervisor).
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        helper = subprocess.Popen([EXEC_HELPER, "--listener-fd", str(theirs.fileno()), "--", "sh", "-c",
                                   "echo ran"], pass_fds=[theirs.fileno()], cwd=self.workspace,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        theirs.close()
        _, fds, _, _ = socket.recv_fds(ours, 1, 1)
        self.assertEqual(len(fds), 1, "no listener was sent")
        listener = fds[0]
        if answer:
            ours.send(b"A")
        ours.close()
        stdout, stderr = helper.communicate(timeout=PATIENCE)
        os.close(listener)
        return helper.returncode, stderr, stdout == "ran\n"

    def test_no_acknowledgement_is_a_refusal(self):
        status, stderr, ran = self.run_helper(answer=False)
        self.assertEqual(status, 125, stderr)
        self.assertIn("the metadata supervisor did not take the listener", stderr)
        self.assertFalse(ran, "the command ran without a supervisor")

    def test_acknowledged_listener_runs_the_command(self):
        status, stderr, ran = self.run_helper(answer=True)
        self.assertEqual(status, 0, stderr)
        self.assertTrue(ran)


@unittest.skipUnless(BWRAP, "bwrap cannot make a sandbox on this host")
@unittest.skipUnless(REFUSE_EXEC, "REFUSE_EXEC_BIN is not set; run the tests through meson")
class HostForbidsReading(Workspace):
    """Where process_vm_readv() is refused (a seccomp profile), bwrap workspace-write is refused, saying why."""

    def test_workspace_write_refused_read_only_runs_probe_says_partial(self):
        marker = os.path.join(self.workspace, "ran")
        refused = subprocess.run([REFUSE_EXEC, "process_vm_readv", BIN, "run", "--backend", "bwrap", "--mode",
                                  "workspace-write", "--root", self.workspace, "--", "touch", marker],
                                 cwd=self.workspace, capture_output=True, text=True, timeout=PATIENCE, check=False)
        self.assertEqual(refused.returncode, 125, refused.stderr)
        self.assertIn("process_vm_readv() is refused on this host", refused.stderr)
        self.assertFalse(os.path.exists(marker), "the command ran")
        ran = subprocess.run([REFUSE_EXEC, "process_vm_readv", BIN, "run", "--backend", "bwrap", "--mode",
                              "read-only", "--", "true"], cwd=self.workspace, capture_output=True, text=True,
                             timeout=PATIENCE, check=False)
        self.assertEqual(ran.returncode, 0, ran.stderr)
        probe = subprocess.run([REFUSE_EXEC, "process_vm_readv", BIN, "probe", "--backend", "bwrap"],
                               cwd=self.workspace, capture_output=True, text=True, timeout=PATIENCE, check=False)
        self.assertIn("so workspace-write under bwrap is refused here", probe.stdout + probe.stderr)


@unittest.skipUnless(BWRAP, "bwrap cannot make a sandbox on this host")
class ConfinedArgv(Workspace):
    """An argv a harness spawns itself: nobody outside supervises it, so metadata is refused, and it says so."""

    def test_workspace_write_argv_refuses_metadata_and_is_partial(self):
        result = run_tool(["confine", "--backend", "bwrap", "--mode", "workspace-write", "--root", self.workspace,
                           "--", "sh", "-c", "chmod 600 file; echo chmod $?; echo data > written"], self.workspace)
        self.assertEqual(result.returncode, 0, result.stderr)
        facts = json.loads(result.stdout)
        self.assertEqual(facts["enforcement"], "partial")
        self.assertTrue(any("no metadata supervisor" in reason for reason in facts["partialReasons"]),
                        facts["partialReasons"])
        before = host_state(self.file)
        spawned = subprocess.run(facts["argv"], cwd=self.workspace, capture_output=True, text=True,
                                 timeout=PATIENCE, check=False)
        self.assertEqual(spawned.returncode, 0, spawned.stderr)
        self.assertEqual(outcomes(spawned.stdout).get("chmod"), 1, spawned.stdout)
        self.assertEqual(host_state(self.file), before)
        with open(os.path.join(self.workspace, "written")) as handle:  # writes still work: only metadata is refused
            self.assertEqual(handle.read(), "data\n")

    def test_argv_refuses_every_connect(self):
        # Nobody outside performs a connect for it: even a socket in its own workspace is refused in the kernel.
        path = os.path.join(self.workspace, "own.sock")
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.addCleanup(listener.close)
        listener.bind(path)
        listener.listen(4)
        program = ("import socket, sys\ns = socket.socket(socket.AF_UNIX)\n"
                   "try:\n    s.connect(sys.argv[1]); print('connect', 0)\n"
                   "except OSError as e:\n    print('connect', e.errno)\n")
        result = run_tool(["confine", "--backend", "bwrap", "--mode", "workspace-write", "--root", self.workspace,
                           "--", PYTHON, "-c", program, path], self.workspace)
        self.assertEqual(result.returncode, 0, result.stderr)
        spawned = subprocess.run(json.loads(result.stdout)["argv"], cwd=self.workspace, capture_output=True,
                                 text=True, timeout=PATIENCE, check=False)
        self.assertEqual(spawned.returncode, 0, spawned.stderr)
        self.assertEqual(outcomes(spawned.stdout).get("connect"), 13, spawned.stdout)  # EACCES


if __name__ == "__main__":
    sys.exit(run_suite(__name__))
