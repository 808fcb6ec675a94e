#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Ptys and POSIX shared memory under the sandbox, and what a confined command still cannot reach.

Each case runs the built `dsh-sandbox run` ($DSH_SANDBOX_BIN) on the real kernel, with a
workspace of its own under $DSH_TEST_SCRATCH, and checks what the command reports and what the
test process sees on its side (the bytes on its own terminal, the objects in /dev/shm).

Under Landlock workspace-write, where the caller may mount, the command gets a /dev/shm and a
/dev/pts of its own (a tmpfs and a devpts instance in a mount namespace of its own), which never
show on the host: multiprocessing, ptys and expect work, and the host's shared memory and
terminals are out of sight.  Where it may not, /dev/ptmx is still granted and the metadata
supervisor hands the command the slave of each pty it makes (TIOCGPTPEER), so openpty, forkpty
and script work; expect, which reopens its slave by name, and multiprocessing's semaphores are
refused, and the host's /dev/pts and /dev/shm stay read-only.  Every Landlock case runs both
ways: as it is, and with CAP_SYS_ADMIN taken away (setpriv).  Either way no other terminal is
opened for writing or injected into, and no other process's shared memory is written or
removed.  Under bwrap the command has a /dev of its own: everything works there.

Output is unittest's verbose form on stdout, one line per case, then "N passed, N failed,
N skipped".
"""
import errno
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from livability import BIN, SCRATCH, bwrap_works, landlock_abi, run_suite  # noqa: E402
import uuid

PYTHON = sys.executable
# A bound on a run that hangs (a broken pty loop), never a measurement.
PATIENCE = 120


BWRAP = bwrap_works()


LANDLOCK_ABI = landlock_abi()


OPENPTY = r"""
import os, termios
master, slave = os.openpty()
print("slave", os.ttyname(slave).startswith("/dev/pts/"))
os.write(slave, b"through\n")
print("master read", os.read(master, 64))
attributes = termios.tcgetattr(slave)
attributes[3] &= ~termios.ECHO
termios.tcsetattr(slave, termios.TCSANOW, attributes)
print("echo off", not termios.tcgetattr(slave)[3] & termios.ECHO)
"""


FORKPTY = r"""
import os, pty
pid, master = os.forkpty()
if pid == 0:
    # login_tty() made the slave this session's controlling terminal.
    print("child", os.ttyname(0).startswith("/dev/pts/"), os.tcgetpgrp(0) == os.getpgrp(), flush=True)
    os._exit(7)
output = b""
while True:
    try:
        chunk = os.read(master, 256)
    except OSError:
        break
    if not chunk:
        break
    output += chunk
_, status = os.waitpid(pid, 0)
print("forkpty", output.decode().strip(), os.waitstatus_to_exitcode(status))
master, slave = pty.openpty()
print("pty.openpty", os.isatty(slave))
"""


PTY_PEER_EDGES = r"""
import errno, fcntl, os
TIOCGPTPEER = 0x5441
def peer(fd, flags=os.O_RDWR | os.O_NOCTTY):
    try:
        return "fd %d" % fcntl.ioctl(fd, TIOCGPTPEER, flags)
    except OSError as error:
        return errno.errorcode[error.errno]
null = os.open("/dev/null", os.O_RDWR)
print("not a pty", peer(null))
master, slave = os.openpty()
print("a slave", peer(slave))
print("bad flags", peer(master, os.O_RDWR | os.O_APPEND))
path_only = os.open("/dev/ptmx", os.O_PATH)
print("O_PATH master", peer(path_only))
print("no descriptor", peer(999))
got = peer(master, os.O_RDWR | os.O_NOCTTY | os.O_CLOEXEC)
number = int(got.split()[1])
print("cloexec", bool(fcntl.fcntl(number, fcntl.F_GETFD) & fcntl.FD_CLOEXEC))
print("same pty", os.ttyname(number) == os.ttyname(slave))
"""


OTHER_TERMINAL = r"""
import errno, fcntl, os, sys, termios
slave_path, master_link = sys.argv[1], sys.argv[2]
def attempt(action):
    try:
        action()
        return "done"
    except OSError as error:
        return errno.errorcode[error.errno]
print("open for writing", attempt(lambda: os.open(slave_path, os.O_WRONLY | os.O_NOCTTY)))
print("open read-write", attempt(lambda: os.open(slave_path, os.O_RDWR | os.O_NOCTTY)))
def inject_through_read_only():
    fd = os.open(slave_path, os.O_RDONLY | os.O_NOCTTY | os.O_NONBLOCK)
    fcntl.ioctl(fd, termios.TIOCSTI, b"!")
print("TIOCSTI through a read-only open", attempt(inject_through_read_only))
print("the master through /proc", attempt(lambda: os.open(master_link, os.O_RDWR | os.O_NOCTTY)))
print("TIOCSTI on the inherited terminal", attempt(lambda: fcntl.ioctl(0, termios.TIOCSTI, b"!")))
print("its peer", attempt(lambda: fcntl.ioctl(0, 0x5441, os.O_RDWR | os.O_NOCTTY)))
"""


SHM_REACH = r"""
import errno, os, sys
for target in sys.argv[1:]:
    def attempt(action):
        try:
            action()
            return "done"
        except OSError as error:
            return errno.errorcode[error.errno]
    where = "by /proc" if target.startswith("/proc/") else "by name"
    print(where, "open for writing", attempt(lambda: os.open(target, os.O_WRONLY)))
    print(where, "truncate", attempt(lambda: os.truncate(target, 0)))
    print(where, "unlink", attempt(lambda: os.unlink(target)))
    print(where, "rename", attempt(lambda: os.rename(target, target + "-moved")))
    print(where, "create beside it", attempt(lambda: os.close(os.open(target + "-planted", os.O_CREAT | os.O_WRONLY))))
"""


MULTIPROCESSING = r"""
import multiprocessing, os
try:
    lock = multiprocessing.Lock()
    with lock:
        pass
    with multiprocessing.Pool(2) as pool:
        print("pool", pool.map(abs, [-1, -2, -3]))
    print("lock ok")
except PermissionError as error:
    print("refused", error.errno)
print("shm entries", len(os.listdir("/dev/shm")))
"""


HOLD_IN_PRIVATE_SHM = r"""
import os, sys, time
ready, go = sys.argv[1:3]
open("/dev/shm/held", "w").close()
open(ready, "w").close()
deadline = time.monotonic() + 60
while not os.path.exists(go) and time.monotonic() < deadline:
    time.sleep(0.01)
print("held", os.path.exists("/dev/shm/held"))
"""


PROPAGATION_WATCHER = r"""
import os, subprocess, sys, time
binary, workspace, python, hold = sys.argv[1:5]
ready, go = os.path.join(workspace, "ready"), os.path.join(workspace, "go")
def shm_mounts():
    with open("/proc/self/mountinfo") as handle:
        return [line for line in handle if line.split()[4] in ("/dev/shm", "/dev/pts")]
print("shared here", all("shared:" in line for line in shm_mounts()) and bool(shm_mounts()))
before = shm_mounts()
command = subprocess.Popen([binary, "run", "--backend", "landlock", "--mode", "workspace-write", "--root",
                            workspace, "--", python, "-c", hold, ready, go], stdout=subprocess.PIPE, text=True)
deadline = time.monotonic() + 60
while not os.path.exists(ready) and command.poll() is None and time.monotonic() < deadline:
    time.sleep(0.01)
print("command ready", os.path.exists(ready))
print("new /dev/shm or /dev/pts mounts here", len(shm_mounts()) - len(before))
print("its file here", os.path.exists("/dev/shm/held"))
open(go, "w").close()
print("command said", command.communicate()[0].strip(), command.returncode)
"""


BWRAP_LIVABILITY = r"""
import multiprocessing, os, sys
print("host object visible", os.path.exists(sys.argv[1]))
master, slave = os.openpty()
print("openpty", os.isatty(slave))
lock = multiprocessing.Lock()
with lock:
    pass
with multiprocessing.Pool(2) as pool:
    print("pool", pool.map(abs, [-1, -2]))
"""


def may_mount():
    """Whether this process may make a tmpfs (fsopen), as the sandbox does for a private /dev."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.syscall(430, b"tmpfs", 1)  # fsopen("tmpfs", FSOPEN_CLOEXEC)
    if fd < 0:
        return False
    os.close(fd)
    return True


def without_mount_privilege():
    """An argv prefix that runs the sandbox unable to mount (None: cannot be arranged here)."""
    if not may_mount():
        return []
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        return None
    return ["setpriv", "--bounding-set=-sys_admin", "--inh-caps=-sys_admin", "--"]


class Confined(unittest.TestCase):
    backend = "landlock"
    prefix = []

    def setUp(self):
        if self.backend == "landlock" and LANDLOCK_ABI < 5:
            self.skipTest(f"the kernel's Landlock ABI is {LANDLOCK_ABI}: ioctl on devices is governed from 5")
        if self.backend == "bwrap" and not BWRAP:
            self.skipTest("bwrap cannot make a sandbox on this host")
        os.makedirs(SCRATCH, exist_ok=True)
        self.workspace = tempfile.mkdtemp(prefix="pty-shm-", dir=SCRATCH)
        self.addCleanup(shutil.rmtree, self.workspace, ignore_errors=True)

    def run_confined(self, argv, **options):
        command = [*self.prefix, BIN, "run", "--backend", self.backend, "--mode", "workspace-write", "--root",
                   self.workspace, "--", *argv]
        options.setdefault("stdin", subprocess.DEVNULL)
        return subprocess.run(command, capture_output=True, text=True, timeout=PATIENCE, check=False,
                              cwd=self.workspace, **options)

    def run_python(self, code, *arguments, **options):
        return self.run_confined([PYTHON, "-c", code, *arguments], **options)

    def assert_ran(self, result, *expected_lines):
        self.assertEqual(result.returncode, 0, f"stdout: {result.stdout!r} stderr: {result.stderr!r}")
        lines = result.stdout.splitlines()
        for line in expected_lines:
            self.assertIn(line, lines, f"stdout: {result.stdout!r} stderr: {result.stderr!r}")

    def host_shm_object(self):
        name = f"/dev/shm/dsh-test-{uuid.uuid4().hex[:8]}"
        with open(name, "wb") as handle:
            handle.write(b"someone else's")
        self.addCleanup(lambda: [os.path.exists(path) and os.unlink(path)
                                 for path in (name, name + "-moved", name + "-planted")])
        return name

    def assert_host_shm_object_untouched(self, name):
        with open(name, "rb") as handle:
            self.assertEqual(handle.read(), b"someone else's")
        self.assertFalse(os.path.exists(name + "-moved"))
        self.assertFalse(os.path.exists(name + "-planted"))


class PrivateDevices:
    """The caller may mount: the command's /dev/shm and /dev/pts are its own."""
    private = True

    def setUp(self):
        super().setUp()
        if not may_mount():
            self.skipTest("this process may not mount (no CAP_SYS_ADMIN over its mount namespace)")


class HostDevices:
    """The caller may not mount (CAP_SYS_ADMIN taken away): the host's /dev/shm and /dev/pts, read-only."""
    private = False

    def setUp(self):
        super().setUp()
        prefix = without_mount_privilege()
        if prefix is None:
            self.skipTest("cannot take the mount privilege away here (not root, or no setpriv)")
        self.prefix = prefix


class Ptys:
    """A command makes ptys of its own under Landlock workspace-write."""

    def test_os_openpty_reads_writes_and_sets_modes(self):
        self.assert_ran(self.run_python(OPENPTY), "slave True", "master read b'through\\r\\n'", "echo off True")

    def test_forkpty_gives_the_child_a_controlling_terminal(self):
        self.assert_ran(self.run_python(FORKPTY), "forkpty child True True 7", "pty.openpty True")

    def test_script_runs_its_command_on_a_pty(self):
        if not shutil.which("script"):
            self.skipTest("util-linux script is not installed")
        result = self.run_confined(["script", "-qc", "tty", "/dev/null"])
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertTrue(result.stdout.strip().startswith("/dev/pts/"), result.stdout)

    def test_expect_spawns_where_its_ptys_open_by_name(self):
        # expect's child reopens the slave by name (/dev/pts/N) for writing: possible in a devpts of the
        # command's own, never in the host's, where every terminal lies (docs/backends.md).
        if not shutil.which("expect"):
            self.skipTest("expect is not installed")
        result = self.run_confined(["expect", "-c", "spawn echo hello; expect hello {puts matched}; expect eof"])
        if self.private:
            self.assert_ran(result, "matched")
            return
        self.assertNotEqual(result.returncode, 0, result.stdout)
        self.assertIn("open(slave pty)", result.stderr)
        self.assertIn("permission denied", result.stderr)
        self.assertNotIn("matched", result.stdout)

    def test_the_supervisors_pty_peer_answers_as_the_kernel(self):
        self.assert_ran(self.run_python(PTY_PEER_EDGES), "not a pty ENOTTY", "a slave EIO", "bad flags EINVAL",
                        "O_PATH master EBADF", "no descriptor EBADF", "cloexec True", "same pty True")


class OtherTerminals:
    """A terminal the command did not make stays out of its reach."""

    def test_another_terminal_cannot_be_written_or_injected(self):
        master, slave = os.openpty()
        self.addCleanup(os.close, master)
        self.addCleanup(os.close, slave)
        # In a devpts of its own the host's /dev/pts/N is not there at all; in the host's it is read-only.
        by_name = "ENOENT" if self.private else "EACCES"
        # The command's stdin is that terminal too (as a user's terminal is): it may use it, not inject into it.
        result = self.run_python(OTHER_TERMINAL, os.ttyname(slave), f"/proc/{os.getpid()}/fd/{master}", stdin=slave)
        self.assert_ran(result, f"open for writing {by_name}", f"open read-write {by_name}",
                        "the master through /proc EACCES", "TIOCSTI on the inherited terminal EPERM",
                        "its peer EIO")
        self.assertTrue(any(f"TIOCSTI through a read-only open {answer}" in result.stdout.splitlines()
                            for answer in ("EPERM", "EACCES", "ENOENT")), result.stdout)
        # On the test's side: nothing was typed into the terminal, nothing written on it.
        for fd in (master, slave):
            os.set_blocking(fd, False)
            with self.assertRaises(BlockingIOError):
                os.read(fd, 64)


class SharedMemory:
    """Another process's object in /dev/shm is neither written nor removed; nothing reaches the host's."""

    def test_multiprocessing_pool_and_lock(self):
        before = set(os.listdir("/dev/shm"))
        result = self.run_python(MULTIPROCESSING)
        if self.private:
            self.assert_ran(result, "pool [1, 2, 3]", "lock ok", "shm entries 0")
        else:
            self.assert_ran(result, f"refused {errno.EACCES}")
        self.assertEqual(set(os.listdir("/dev/shm")) - before, set())

    def test_another_processs_object_cannot_be_written_or_removed(self):
        name = self.host_shm_object()
        result = self.run_python(SHM_REACH, name, f"/proc/{os.getpid()}/root{name}")
        by_name = "ENOENT" if self.private else "EACCES"
        self.assert_ran(result, f"by name open for writing {by_name}", f"by name truncate {by_name}",
                        f"by name unlink {by_name}", f"by name rename {by_name}",
                        "by name create beside it " + ("done" if self.private else "EACCES"),
                        "by /proc open for writing EACCES", "by /proc truncate EACCES", "by /proc unlink EACCES",
                        "by /proc rename EACCES", "by /proc create beside it EACCES")
        self.assert_host_shm_object_untouched(name)


class LandlockPrivatePtys(PrivateDevices, Ptys, Confined):
    pass


class LandlockHostPtys(HostDevices, Ptys, Confined):
    pass


class LandlockPrivateOtherTerminals(PrivateDevices, OtherTerminals, Confined):
    pass


class LandlockHostOtherTerminals(HostDevices, OtherTerminals, Confined):
    pass


class ProbeNote:
    """probe says which /dev a workspace-write call gets, as the caller it runs as."""

    def test_probe_says_what_a_call_gets(self):
        probe = subprocess.run([*self.prefix, BIN, "probe", "--backend", "landlock"], capture_output=True, text=True,
                               timeout=PATIENCE, check=False)
        expected = ("/dev/shm and /dev/pts of the command's own" if self.private
                    else "cannot mount, so /dev/shm and /dev/pts stay the host's")
        self.assertIn(expected, probe.stdout, probe.stdout + probe.stderr)


class LandlockPrivateProbe(PrivateDevices, ProbeNote, Confined):
    pass


class LandlockHostProbe(HostDevices, ProbeNote, Confined):
    pass


class LandlockPrivateSharedMemory(PrivateDevices, SharedMemory, Confined):
    pass


class LandlockHostSharedMemory(HostDevices, SharedMemory, Confined):
    pass


class LandlockPrivateMounts(PrivateDevices, Confined):
    """How the private /dev is made: never seen by the host, refused when it cannot be made, in every path."""

    def test_the_mounts_never_reach_a_shared_host_dev(self):
        if not shutil.which("unshare"):
            self.skipTest("util-linux unshare is not installed")
        watcher = subprocess.run(["unshare", "--mount", "--propagation", "shared", "--", PYTHON, "-c",
                                  PROPAGATION_WATCHER, BIN, self.workspace, PYTHON, HOLD_IN_PRIVATE_SHM],
                                 capture_output=True, text=True, timeout=PATIENCE, check=False)
        self.assert_ran(watcher, "shared here True", "command ready True", "new /dev/shm or /dev/pts mounts here 0",
                        "its file here False", "command said held True 0")

    def test_a_cwd_on_the_covered_host_devices_is_refused(self):
        # Entered before the moves, such a cwd would stay on the host's /dev/pts or /dev/shm, under the command's own.
        marker = self.host_shm_object()
        for cwd in ("/dev/pts", "/dev/shm"):
            with self.subTest(cwd=cwd):
                listed = subprocess.run([BIN, "bash", "--backend", "landlock", "--mode", "workspace-write", "--root",
                                         self.workspace, "--cwd", cwd, "--", "ls -a ."], capture_output=True,
                                        text=True, timeout=PATIENCE, check=False, stdin=subprocess.DEVNULL)
                self.assertEqual(listed.returncode, 125, listed.stdout + listed.stderr)
                self.assertNotIn(os.path.basename(marker), listed.stdout)
                ran = subprocess.run([BIN, "run", "--backend", "landlock", "--mode", "workspace-write", "--root",
                                      self.workspace, "--", "ls", "-a"], capture_output=True, text=True, cwd=cwd,
                                     timeout=PATIENCE, check=False, stdin=subprocess.DEVNULL)
                self.assertEqual(ran.returncode, 125, ran.stdout + ran.stderr)
                self.assertEqual(ran.stdout, "")

    def runners(self):
        """The in-process spawn (dsh-sandbox run) and the launcher, each as an argv prefix."""
        return ([BIN, "run", "--backend", "landlock", "--mode", "workspace-write", "--root", self.workspace, "--"],
                [os.environ.get("LANDLOCK_RUN_BIN", ""), "--ro", "/", "--rw", "/dev/null", "--rw", self.workspace,
                 "--"])

    def run_injecting(self, failure, argv):
        """`argv` under strace, `failure` (strace's inject= syntax) injected in every process."""
        if not shutil.which("strace"):
            self.skipTest("strace is not installed (it injects the failure)")
        # LeakSanitizer cannot run under ptrace (a sanitized build): leaks are not what these cases are about.
        asan = ":".join(filter(None, [os.environ.get("ASAN_OPTIONS", ""), "detect_leaks=0"]))
        return subprocess.run(["strace", "-f", "-qq", "-o", "/dev/null", "-e", "trace=" + failure.split(":")[0],
                               "-e", "inject=" + failure, "--", *argv], capture_output=True, text=True,
                              timeout=PATIENCE, check=False, stdin=subprocess.DEVNULL, cwd=self.workspace,
                              env=dict(os.environ, ASAN_OPTIONS=asan))

    def test_no_namespace_to_be_had_leaves_the_hosts_dev_read_only(self):
        # unshare(2) refused in the child (a service's RestrictNamespaces, the namespace limit): the command
        # runs as where the caller may not mount, never with a /dev/shm shared with the host.
        before = set(os.listdir("/dev/shm"))
        for runner in self.runners():
            result = self.run_injecting("unshare:error=EPERM", [*runner, PYTHON, "-c", MULTIPROCESSING])
            self.assert_ran(result, f"refused {errno.EACCES}")
        self.assertEqual(set(os.listdir("/dev/shm")) - before, set())

    def test_a_half_made_dev_refuses_the_command(self):
        # The namespace exists but its mounts cannot be made slaves: nothing is mounted, nothing runs.
        marker = os.path.join(self.workspace, "ran")
        for runner in self.runners():
            result = self.run_injecting("mount:error=EPERM", [*runner, "sh", "-c", f"echo > {marker}"])
            self.assertEqual(result.returncode, 125, result.stderr)
            self.assertIn("private /dev/shm and /dev/pts", result.stderr)
            self.assertFalse(os.path.exists(marker), runner[0])

    def test_the_launcher_argv_of_confine_gets_them_too(self):
        confine = subprocess.run([BIN, "confine", "--backend", "landlock", "--mode", "workspace-write", "--root",
                                  self.workspace, "--", PYTHON, "-c", MULTIPROCESSING],
                                 capture_output=True, text=True, check=False)
        self.assertEqual(confine.returncode, 0, confine.stderr)
        argv = json.loads(confine.stdout)["argv"]
        self.assertIn("/dev/ptmx", argv)
        result = subprocess.run(argv, capture_output=True, text=True, timeout=PATIENCE, check=False,
                                stdin=subprocess.DEVNULL, cwd=self.workspace)
        self.assert_ran(result, "pool [1, 2, 3]", "lock ok", "shm entries 0")

    def test_the_hosts_terminals_are_out_of_sight(self):
        master, slave = os.openpty()
        self.addCleanup(os.close, master)
        self.addCleanup(os.close, slave)
        result = self.run_python("import os; print(sorted(os.listdir('/dev/pts')))")
        self.assert_ran(result, "['ptmx']")


class BwrapDevice(Confined):
    """Under bwrap the command has a /dev of its own: ptys and /dev/shm work, the host's /dev/shm is not there."""
    backend = "bwrap"

    def test_ptys_and_multiprocessing_in_a_private_dev(self):
        name = self.host_shm_object()
        before = set(os.listdir("/dev/shm"))
        self.assert_ran(self.run_python(BWRAP_LIVABILITY, name), "host object visible False", "openpty True",
                        "pool [1, 2]")
        self.assertEqual(set(os.listdir("/dev/shm")) - before, set())

    def test_expect_runs(self):
        if not shutil.which("expect"):
            self.skipTest("expect is not installed")
        result = self.run_confined(["expect", "-c", "spawn echo hello; expect hello {puts matched}; expect eof"])
        self.assert_ran(result, "matched")


if __name__ == "__main__":
    sys.exit(run_suite(__name__))
