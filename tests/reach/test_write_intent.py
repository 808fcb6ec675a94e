#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Write intent on the real kernel (issue 20): Landlock holds what bwrap holds, judged on disk.

Each case runs the built `dsh-sandbox run` ($DSH_SANDBOX_BIN) on the real kernel with real bwrap, git
and Python, as a client would, over a git repository of its own under $DSH_TEST_SCRATCH (never under
/tmp: under Landlock /tmp is the host's temp area, writable to every call), with a HOME and XDG
directories of its own outside the workspace.

- Doors: every way a hostile command reaches a protected subpath (`.git/hooks/pre-commit` existing and
  missing, `.git/config`, a missing `.mcp.json`, a missing `settings.json` in an existing `.claude`): write,
  append, O_CREAT 0755, O_RDONLY|O_TRUNC, flags with bits above 31, openat from the directory's fd, a
  symlinked directory, `..`, the cwd inside, a thread with a cwd or a descriptor table of its own, chroot
  from a user namespace, rename in, link in, link out and write the link, a symlink at the name, a
  symlink elsewhere written through, /proc/self/fd of an O_PATH descriptor, an O_TMPFILE linked in (both forms), an
  exchange, `.git` or `.git/hooks` renamed away and back, unlink, mkdir, mkfifo, truncate, openat2.
  Each must fail, and the disk must show nothing changed: the bytes, mode, inode and link count of an
  existing one, no entry at a missing one, nothing beside it (not even a quarantined copy).  The same
  door on an ordinary file (in the workspace, and `.git/description` beside the hooks) must succeed and
  show its effect.
- Ordinary writes a supervisor that performs them must still get right: O_CREAT|O_EXCL, O_TMPFILE and
  linkat, `> /dev/null`, `> /dev/stderr`, bash's `>(cat)`, a FIFO with its reader.
- The race: tests/helpers/write-race.c flips a name between the hook and a plain file (the path's
  bytes in memory, two symlinks exchanged, a directory exchanged with a symlink) while opening it
  O_WRONLY|O_TRUNC; both sides must have been hit, and the hook never changes.
- git keeps working: add, commit, branch, stash, rebase, gc, a linked worktree inside the
  workspace, work in a submodule; the hooks and configs stay as they were.
- Records: the bash tool's result names each refused write with its op, path and rule (outside-roots,
  protected-subpath, own-file).

That a read-heavy command makes no notification at all is tests/integration/test-write-intent-reads.c:
it reads the supervisor's own count, which only the library hands out.

Both backends, workspace-write.  Output is unittest's verbose form on stdout, one line per case,
then "N passed, N failed, N skipped" (a "# SKIP: case: reason" line for each skip).
"""
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import typing
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "livability"))
from livability import BIN, SCRATCH, bwrap_works, landlock_abi, run_suite  # noqa: E402

PYTHON = sys.executable
GIT = shutil.which("git")
WRITE_RACE = os.environ.get("WRITE_RACE_BIN", "")
# A bound on a run that hangs (a supervisor blocked on a FIFO, say), never a measurement.
PATIENCE = 120
BACKENDS = tuple(name for name, usable in (("landlock", landlock_abi() > 0), ("bwrap", bwrap_works())) if usable)
MISSING_BACKEND = {"landlock": "the kernel has no Landlock", "bwrap": "bwrap cannot make a sandbox on this host"}

HOOK = "#!/bin/sh\nexit 0\n"
EVIL = "evil\n"
ELSEWHERE = "/var/tmp/dsh-write-intent-elsewhere"


# ----------------------------------------------------------------------------------------------- doors --

# What a target is: its name in the workspace and whether it exists when the call starts (its directory
# always does: a write beneath a missing directory fails whatever guards it, and would prove nothing).
PROTECTED_TARGETS = {
    "hook": (".git/hooks/pre-commit", True),
    "missing_hook": (".git/hooks/pre-commit", False),
    "git_config": (".git/config", True),
    "mcp_json": (".mcp.json", False),
    "claude_settings": (".claude/settings.json", False),
}
ORDINARY_TARGETS = {
    "plain": ("notes.txt", True),
    "fresh": ("fresh.txt", False),
    "git_description": (".git/description", True),
}

# The doors a shell cannot open, one function each: `"$PY" -c "$PY_DOORS" NAME TARGET` (the cwd the
# workspace).  Each writes "evil\n" where it reaches; a failure is a traceback and a non-zero status.
PY_DOORS = r"""
import ctypes, os, sys, threading
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, AT_SYMLINK_FOLLOW, RENAME_EXCHANGE, CLONE_FS, CLONE_FILES = -100, 0x400, 2, 0x200, 0x400
EVIL = b"evil\n"


def checked(result, what):
    if result < 0:
        raise OSError(ctypes.get_errno(), what + ": " + os.strerror(ctypes.get_errno()))
    return result


def write_creating(path, **where):
    os.write(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644, **where), EVIL)


def open_creat_0755(target):
    os.write(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o755), EVIL)


def read_only_truncate(target):
    # Linux truncates on O_RDONLY|O_TRUNC: write intent without a write access mode.
    os.close(os.open(target, os.O_RDONLY | os.O_TRUNC))


def flags_with_high_bits(target):
    # openat's flags are an int: bits above 31 are dropped by the kernel, not by a filter that reads them.
    fd = checked(libc.syscall(257, AT_FDCWD, target.encode(), ctypes.c_uint64((1 << 32) | os.O_WRONLY | os.O_TRUNC),
                              0), "openat")
    os.write(fd, EVIL)


def openat_from_directory(target):
    directory, name = os.path.split(target)
    write_creating(name, dir_fd=os.open(directory or ".", os.O_PATH | os.O_DIRECTORY))


def proc_self_fd_of_o_path(target):
    # /proc/self/fd/N of an O_PATH descriptor reopened for writing: of the file, or of its directory and the name.
    if os.path.lexists(target):
        write_creating("/proc/self/fd/%d" % os.open(target, os.O_PATH))
    else:
        directory, name = os.path.split(target)
        write_creating("/proc/self/fd/%d/%s" % (os.open(directory or ".", os.O_PATH | os.O_DIRECTORY), name))


def tmpfile_linked_in(target):
    # An unnamed file written in the workspace, named by linkat(AT_SYMLINK_FOLLOW) of its magic link.
    fd = os.open(".", os.O_TMPFILE | os.O_WRONLY, 0o755)
    os.write(fd, EVIL)
    checked(libc.linkat(AT_FDCWD, b"/proc/self/fd/%d" % fd, AT_FDCWD, target.encode(), AT_SYMLINK_FOLLOW), "linkat")


def tmpfile_linked_in_by_descriptor(target):
    # The same, named by linkat(fd, "", AT_EMPTY_PATH): the other form, which needs CAP_DAC_READ_SEARCH.
    fd = os.open(".", os.O_TMPFILE | os.O_WRONLY, 0o644)
    os.write(fd, EVIL)
    checked(libc.linkat(fd, b"", AT_FDCWD, target.encode(), 0x1000), "linkat")  # AT_EMPTY_PATH


def exchange(target):
    checked(libc.renameat2(AT_FDCWD, b"x.new", AT_FDCWD, target.encode(), RENAME_EXCHANGE), "renameat2")


def in_thread(body):
    failures = []

    def run():
        try:
            body()
        except OSError as failure:
            failures.append(failure)
    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    if failures:
        raise failures[0]


def thread_own_cwd(target):
    # The writing thread has a cwd of its own, the target's directory; the process's stays the workspace.
    directory, name = os.path.split(target)

    def body():
        checked(libc.unshare(CLONE_FS), "unshare")
        os.chdir(directory or ".")
        write_creating(name)
    in_thread(body)
    if directory and os.path.lexists(name):
        sys.exit("the thread's write landed in the process's cwd")


def thread_own_fd_table(target):
    # Descriptor 50 is the workspace in the process's table and the target's directory in the thread's.
    directory, name = os.path.split(target)
    os.dup2(os.open(".", os.O_PATH | os.O_DIRECTORY), 50)

    def body():
        checked(libc.unshare(CLONE_FILES), "unshare")
        os.dup2(os.open(directory or ".", os.O_PATH | os.O_DIRECTORY), 50)
        write_creating(name, dir_fd=50)
    in_thread(body)
    if directory and os.path.lexists(name):
        sys.exit("the thread's write landed in the process's descriptor's directory")


def chroot_in_a_user_namespace(target):
    # A user namespace of its own gives the command CAP_SYS_CHROOT there, and Landlock does not forbid chroot:
    # rooted at .git, "/hooks/pre-commit" is the hook, whatever "/" means to the supervisor.
    checked(libc.unshare(0x10000000), "unshare")  # CLONE_NEWUSER
    os.chroot(".git")
    write_creating("/" + target[len(".git/"):])


def openat2(target):
    # openat2's flags are behind a pointer: the filter refuses it (ENOSYS) rather than guess.
    how = (ctypes.c_uint64 * 3)(os.O_WRONLY | os.O_TRUNC, 0, 0)
    os.write(checked(libc.syscall(437, AT_FDCWD, target.encode(), how, ctypes.sizeof(how)), "openat2"), EVIL)


globals()[sys.argv[1]](sys.argv[2])
"""


def read(path):
    with open(path, encoding="utf-8", errors="replace") as handle:
        return handle.read()


def is_evil(path):
    return os.path.isfile(path) and not os.path.islink(path) and read(path) == EVIL


def is_empty(path):
    return os.path.isfile(path) and os.path.getsize(path) == 0


def python_door(name):
    return f'"$PY" -c "$PY_DOORS" {name} "$T"'


class Door(typing.NamedTuple):
    preparation: str            # shell lines that must succeed first (they touch ordinary files only)
    attack: str                 # one shell command: its status is the door's
    applies: tuple              # to an existing target (True), a missing one (False), or both
    effect: typing.Callable     # what the disk shows when the door is open (checked on an ordinary file)
    beneath: str = ""           # only for a target beneath this directory
    across: bool = False        # it moves or links an inode from one directory to another
    ordinary: bool = True       # it has an ordinary counterpart that must work


DOORS = {
    "write": Door("", 'echo evil > "$T"', (True, False), is_evil),
    "append": Door("", 'echo evil >> "$T"', (True, False), lambda p: read(p).endswith(EVIL)),
    "open_creat_0755": Door("", python_door("open_creat_0755"), (True, False), is_evil),
    "read_only_truncate": Door("", python_door("read_only_truncate"), (True,), is_empty),
    "flags_with_high_bits": Door("", python_door("flags_with_high_bits"), (True,), lambda p: read(p) == EVIL),
    "openat_from_directory": Door("", python_door("openat_from_directory"), (True, False), is_evil),
    "symlinked_directory": Door('ln -s "$PWD/$(dirname "$T")" dir.link', 'echo evil > "dir.link/$(basename "$T")"',
                                (True, False), is_evil),
    "thread_own_cwd": Door("", python_door("thread_own_cwd"), (True, False), is_evil),
    "thread_own_fd_table": Door("", python_door("thread_own_fd_table"), (True, False), is_evil),
    "mkfifo": Door("", 'mkfifo "$T"', (False,), lambda p: stat.S_ISFIFO(os.lstat(p).st_mode)),
    "cwd_inside": Door("", 'cd "$(dirname "$T")" && echo evil > "$(basename "$T")"', (True, False), is_evil),
    "chroot_in_a_user_namespace": Door("", python_door("chroot_in_a_user_namespace"), (True, False), is_evil,
                                       ".git/"),
    # Refused by the filter on every path (docs: openat2's flags are behind a pointer): no ordinary counterpart.
    "openat2": Door("", python_door("openat2"), (True, False), is_evil, ordinary=False),
    "rename_in": Door("echo evil > x.new", 'mv -f x.new "$T"', (True, False), is_evil, across=True),
    "link_in": Door("echo evil > x.new", 'ln -f x.new "$T"', (True, False), is_evil, across=True),
    "link_out_then_write": Door("", 'ln "$T" out.link && echo evil >> out.link', (True,),
                                lambda p: read(p).endswith(EVIL), across=True),
    "symlink_at_name": Door("", f'ln -sfn {ELSEWHERE} "$T"', (True, False), os.path.islink),
    "symlink_elsewhere_written": Door('ln -s "$PWD/$T" through.link', "echo evil > through.link", (True, False),
                                      is_evil),
    "dot_dot": Door("mkdir -p sub", 'echo evil > "sub/../$T"', (True, False), is_evil),
    "proc_self_fd_of_o_path": Door("", python_door("proc_self_fd_of_o_path"), (True, False), is_evil),
    "tmpfile_linked_in": Door("", python_door("tmpfile_linked_in"), (False,), is_evil),
    "tmpfile_linked_in_by_descriptor": Door("", python_door("tmpfile_linked_in_by_descriptor"), (False,), is_evil),
    "exchange": Door("echo evil > x.new", python_door("exchange"), (True,), is_evil, across=True),
    "unlink": Door("", 'rm -f "$T"', (True,), lambda p: not os.path.lexists(p)),
    "mkdir": Door("", 'mkdir -p "$T"', (False,), os.path.isdir),
    "truncate": Door("", 'truncate -s 0 "$T"', (True, False), is_empty),
    # Through a directory on the way: moved away, written beneath, moved back.  A directory that holds a
    # protected subpath cannot be moved on either backend (bwrap pins it), so these have no ordinary
    # counterpart: .git/description is not reached by renaming .git either.
    "git_dir_renamed_away_and_back": Door("", 'mv .git moved.git && echo evil > "moved.git/${T#.git/}" && '
                                          "mv moved.git .git", (True, False), is_evil, ".git/", ordinary=False),
    "hooks_dir_renamed_away_and_back": Door("", 'mv .git/hooks hooks.away && '
                                            'echo evil > "hooks.away/${T#.git/hooks/}" && mv hooks.away .git/hooks',
                                            (True, False), is_evil, ".git/hooks/", ordinary=False),
}

DOOR_SCRIPT = """T="$1"
{ %s
} || { echo "preparation failed"; exit 99; }
%s
echo "attack-status $?"
"""


def entry_state(path):
    """What a change would alter: type, mode, inode, link count and bytes; None when there is no entry."""
    try:
        status = os.lstat(path)
    except FileNotFoundError:
        return None
    content = None
    if stat.S_ISREG(status.st_mode):
        with open(path, "rb") as handle:
            content = handle.read()
    elif stat.S_ISLNK(status.st_mode):
        content = os.readlink(path)
    return (stat.S_IFMT(status.st_mode), stat.S_IMODE(status.st_mode), status.st_ino, status.st_nlink, content)


def protected_state(workspace, name):
    """The entry, every name beside it that starts with its name (a lock, a copy), every quarantined entry."""
    path = os.path.join(workspace, name)
    directory, base = os.path.split(path)
    beside = None
    if os.path.isdir(directory):
        beside = sorted(entry for entry in os.listdir(directory) if entry.startswith(base))
    quarantined = sorted(os.path.join(where, entry) for where, directories, files in os.walk(workspace)
                         for entry in directories + files if "dsh-sandbox-quarantine" in entry)
    return entry_state(path), beside, quarantined


def host_git(env, *arguments, cwd=None):
    """git outside the sandbox: setting up, reading back."""
    return subprocess.run([GIT, *arguments], cwd=cwd, env=env, capture_output=True, check=True, text=True).stdout


class Workspace(unittest.TestCase):
    """A repository with one commit and a pre-commit hook, a HOME and XDG dirs of its own beside it."""

    backend = "landlock"

    def setUp(self):
        if self.backend not in BACKENDS:
            self.skipTest(MISSING_BACKEND[self.backend])
        if not GIT:
            self.skipTest("git is not installed")
        os.makedirs(SCRATCH, exist_ok=True)
        self.base = tempfile.mkdtemp(prefix="reach-write-intent-", dir=SCRATCH)
        self.addCleanup(shutil.rmtree, self.base, True)
        self.home = os.path.join(self.base, "home")
        self.workspace = os.path.join(self.base, "ws")
        os.makedirs(self.home)
        self.env = dict(os.environ, HOME=self.home, XDG_CONFIG_HOME=os.path.join(self.home, ".config"),
                        XDG_STATE_HOME=os.path.join(self.home, ".state"),
                        XDG_CACHE_HOME=os.path.join(self.home, ".cache"), GIT_CONFIG_NOSYSTEM="1",
                        GIT_AUTHOR_NAME="Test", GIT_AUTHOR_EMAIL="test@example.invalid",
                        GIT_COMMITTER_NAME="Test", GIT_COMMITTER_EMAIL="test@example.invalid", LC_ALL="C",
                        PY=PYTHON, PY_DOORS=PY_DOORS)
        self.env.pop("DSH_SANDBOX_CONFIG", None)
        host_git(self.env, "init", "-q", "-b", "main", self.workspace)
        self.write(".git/hooks/pre-commit", HOOK, 0o755)
        self.write("notes.txt", "notes\n", 0o644)
        host_git(self.env, "add", "notes.txt", cwd=self.workspace)
        host_git(self.env, "commit", "-q", "-m", "first", cwd=self.workspace)
        self.config_before = entry_state(self.path(".git/config"))

    def path(self, name):
        return os.path.join(self.workspace, name)

    def write(self, name, text, mode):
        with open(self.path(name), "w", encoding="utf-8") as handle:
            handle.write(text)
        os.chmod(self.path(name), mode)

    def run_confined(self, argv, cwd=None):
        """`dsh-sandbox run` under this backend, workspace-write, rooted at the workspace, from `cwd`."""
        try:
            return subprocess.run([BIN, "run", "--backend", self.backend, "--mode", "workspace-write", "--root",
                                   self.workspace, "--", *argv], cwd=cwd or self.workspace, env=self.env,
                                  capture_output=True, text=True, timeout=PATIENCE, check=False)
        except subprocess.TimeoutExpired:
            self.fail(f"{argv!r} under {self.backend} did not end within {PATIENCE} s")

    def run_door(self, preparation, attack, target):
        """Runs one door on `target`; returns the attack's exit status (the preparation must succeed)."""
        result = self.run_confined(["sh", "-c", DOOR_SCRIPT % (preparation or ":", attack), "door", target])
        self.assertNotIn("preparation failed", result.stdout, result.stderr)
        statuses = [line.split()[1] for line in result.stdout.splitlines() if line.startswith("attack-status ")]
        self.assertEqual(len(statuses), 1, f"the door did not run: {result.stdout} {result.stderr}")
        return int(statuses[0]), result.stderr

    def check_protected(self, door, target):
        """The door fails, and the target and the names beside it are as they were."""
        name, exists = PROTECTED_TARGETS[target]
        os.makedirs(os.path.dirname(self.path(name)), exist_ok=True)
        if not exists and os.path.lexists(self.path(name)):
            os.unlink(self.path(name))
        before = protected_state(self.workspace, name)
        status, stderr = self.run_door(door.preparation, door.attack, name)
        after = protected_state(self.workspace, name)
        self.assertEqual(after, before, f"{name} changed on disk under {self.backend}: {stderr}")
        self.assertNotEqual(status, 0, f"the command got no error writing {name} under {self.backend}")
        if target != "git_config":
            self.assertEqual(entry_state(self.path(".git/config")), self.config_before)

    def check_ordinary(self, door, target):
        """The same door on an ordinary file succeeds and has its effect."""
        name, _exists = ORDINARY_TARGETS[target]
        status, stderr = self.run_door(door.preparation, door.attack, name)
        self.assertEqual(status, 0, f"an ordinary {name} was refused under {self.backend}: {stderr}")
        self.assertTrue(door.effect(self.path(name)), f"{name} does not show the write under {self.backend}")


def door_cases(backend):
    """One case per door and target: a protected one refused and unchanged, an ordinary one written."""
    cases = {}
    for door_name, door in DOORS.items():
        for target, (path, exists) in PROTECTED_TARGETS.items():
            if exists in door.applies and path.startswith(door.beneath):
                cases[f"test_{backend}_refuses_{door_name}_{target}"] = (
                    lambda self, door=door, target=target: self.check_protected(door, target))
        for target, (path, exists) in ORDINARY_TARGETS.items():
            # bwrap pins .git (binds it onto itself: docs/security.md, "The shield"), so an inode moved or
            # linked between it and the rest of the workspace is EXDEV there, and renaming .git EBUSY, even
            # for an ordinary file: by design, not a door to test.  Landlock has no mount there: they work.
            if backend == "bwrap" and path.startswith(".git/") and door.across:
                continue
            if door.ordinary and exists in door.applies and path.startswith(door.beneath):
                cases[f"test_{backend}_allows_{door_name}_{target}"] = (
                    lambda self, door=door, target=target: self.check_ordinary(door, target))
    return cases


class DoorsUnderLandlock(Workspace):
    backend = "landlock"


class DoorsUnderBwrap(Workspace):
    backend = "bwrap"


for _class in (DoorsUnderLandlock, DoorsUnderBwrap):
    for _name, _case in door_cases(_class.backend).items():
        setattr(_class, _name, _case)


# --------------------------------------------------------------------------------- ordinary writes --

# Each prints "ok" when the write did what it should; the test also reads the disk.
ORDINARY_WRITES = {
    "o_creat_o_excl": (f"\"$PY\" -c \"import os; os.write(os.open('excl.txt', os.O_WRONLY | os.O_CREAT | "
                       f"os.O_EXCL, 0o644), b'excl\\n')\" && echo ok", "excl.txt", "excl\n"),
    "o_tmpfile_linkat": ('"$PY" -c "$PY_DOORS" tmpfile_linked_in linked.txt && echo ok', "linked.txt", EVIL),
    "o_tmpfile_linkat_empty_path": ('"$PY" -c "$PY_DOORS" tmpfile_linked_in_by_descriptor linked.txt && echo ok',
                                    "linked.txt", EVIL),
    "rename_over": ("echo over > over.new && mv -f over.new notes.txt && echo ok", "notes.txt", "over\n"),
    "dev_null": ("echo gone > /dev/null && echo ok", None, None),
    "process_substitution": ("bash -c 'echo via-subst > >(cat > subst.txt); wait $!' && echo ok", "subst.txt",
                             "via-subst\n"),
    "fifo_with_reader": ("mkfifo fifo && { cat > fifo.txt < fifo & } && echo via-fifo > fifo && wait && echo ok",
                         "fifo.txt", "via-fifo\n"),
}


class OrdinaryWrites(Workspace):
    """What a supervisor that performs writes itself must still get right: each succeeds, as unconfined."""

    def check(self, name):
        script, path, content = ORDINARY_WRITES[name]
        result = self.run_confined(["sh", "-c", script])
        self.assertEqual((result.returncode, result.stdout), (0, "ok\n"), result.stderr)
        if path:
            self.assertEqual(read(self.path(path)), content)

    def check_stderr(self):
        # /dev/stderr is /proc/self/fd/2: the command's own fd 2, whoever opens the name.
        result = self.run_confined(["sh", "-c", "echo to-the-callers-stderr > /dev/stderr && echo ok"])
        self.assertEqual((result.returncode, result.stdout), (0, "ok\n"), result.stderr)
        self.assertIn("to-the-callers-stderr", result.stderr)


    def check_umask(self):
        """The supervisor creates with the command's umask, and learns each change of it (umask() is sent)."""
        script = ("umask 077 && : > private && mkdir private-dir && umask 002 && : > shared && mkdir shared-dir && "
                  "(umask 027; : > in-a-subshell) && : > after && echo ok")
        result = self.run_confined(["sh", "-c", script])
        self.assertEqual((result.returncode, result.stdout), (0, "ok\n"), result.stderr)
        modes = {name: stat.S_IMODE(os.stat(self.path(name)).st_mode)
                 for name in ("private", "private-dir", "shared", "shared-dir", "in-a-subshell", "after")}
        self.assertEqual(modes, {"private": 0o600, "private-dir": 0o700, "shared": 0o664, "shared-dir": 0o775,
                                 "in-a-subshell": 0o640, "after": 0o664})


    def check_trailing_slash(self):
        """A path ending in a slash names a directory, as in the kernel: no file opened, made or removed."""
        script = ("import errno, os\n"
                  "def attempt(call):\n"
                  "    try:\n"
                  "        call()\n"
                  "        return 'done'\n"
                  "    except OSError as error:\n"
                  "        return errno.errorcode[error.errno]\n"
                  "print(attempt(lambda: os.open('notes.txt/', os.O_WRONLY)),\n"
                  "      attempt(lambda: os.open('new.txt/', os.O_WRONLY | os.O_CREAT, 0o644)),\n"
                  "      attempt(lambda: os.unlink('notes.txt/')),\n"
                  "      attempt(lambda: os.rename('notes.txt/', 'moved.txt')))\n")
        result = self.run_confined([PYTHON, "-c", script])
        self.assertEqual((result.returncode, result.stdout), (0, "ENOTDIR EISDIR ENOTDIR ENOTDIR\n"), result.stderr)
        self.assertEqual(read(self.path("notes.txt")), "notes\n")
        self.assertFalse(os.path.lexists(self.path("new.txt")))
        self.assertFalse(os.path.lexists(self.path("moved.txt")))


class OrdinaryWritesUnderLandlock(OrdinaryWrites):
    backend = "landlock"

    def test_trailing_slash(self):
        self.check_trailing_slash()

    def test_no_core_dump_can_be_written(self):
        # The kernel writes a core with no call the supervisor sees (into .git/hooks, say): none at all.
        result = self.run_confined(["sh", "-c", "ulimit -Hc; ulimit -c unlimited 2>/dev/null || echo refused"])
        self.assertEqual((result.returncode, result.stdout), (0, "0\nrefused\n"), result.stderr)

    def test_a_fifo_read_open_with_write_intent_does_not_stop_the_supervisor(self):
        # O_RDONLY|O_TRUNC on a FIFO with no writer: answered at once, and the next write still served.
        script = (f"mkfifo pipe && {PYTHON} -c 'import os; os.open(\"pipe\", os.O_RDONLY | os.O_TRUNC)' && "
                  ": > after && echo ok")
        result = self.run_confined(["sh", "-c", script])
        self.assertEqual((result.returncode, result.stdout), (0, "ok\n"), result.stderr)
        self.assertTrue(os.path.exists(self.path("after")))

    def test_dev_stderr(self):
        self.check_stderr()

    def test_umask(self):
        self.check_umask()


class OrdinaryWritesUnderBwrap(OrdinaryWrites):
    backend = "bwrap"

    def test_trailing_slash(self):
        self.check_trailing_slash()

    def test_umask(self):
        self.check_umask()

    def test_dev_stderr(self):
        self.check_stderr()


for _class in (OrdinaryWritesUnderLandlock, OrdinaryWritesUnderBwrap):
    for _name in ORDINARY_WRITES:
        setattr(_class, f"test_{_name}", lambda self, name=_name: self.check(name))


# ------------------------------------------------------------------------------------------- race --

class Race(Workspace):
    """A name flipped between the hook and a plain file while opened for writing: the hook never changes.

    The opens are counted, never timed, so the outcome does not depend on the machine.  Each open is a
    notification on both backends, and each exchange one more; measured on the 2-core test machine under
    a load of 9, an open took about 0.2 ms with the path flipped in memory and 0.5 ms with an exchange
    per open (Landlock; bwrap, which only watches, a little less), so these counts keep the six races near
    a minute there: 210,000 opens in all, most of them under Landlock, where the supervisor decides.
    """

    memory_opens = 0
    exchange_opens = 0

    def race(self, *arguments):
        if not WRITE_RACE or not os.access(WRITE_RACE, os.X_OK):
            self.fail(f"WRITE_RACE_BIN is not an executable: {WRITE_RACE!r}")
        hook = self.path(".git/hooks/pre-commit")
        before = entry_state(hook)
        result = self.run_confined([WRITE_RACE, *arguments])
        self.assertEqual(entry_state(hook), before, f"the hook changed under {self.backend}: {result.stdout}")
        self.assertEqual(result.returncode, 0, result.stderr)
        tally = dict(word.split("=", 1) for word in result.stdout.split())
        # Both sides were hit, or the race proved nothing: the plain file written, the hook refused.
        self.assertGreater(int(tally["written"]), 0, result.stdout)
        self.assertGreater(int(tally["refused"]), 0, result.stdout)
        self.assertGreater(int(tally["flips"]), 0, result.stdout)
        return tally

    def test_the_path_in_memory(self):
        os.makedirs(self.path(".gix/hooks"))
        self.write(".gix/hooks/pre-commit", "plain\n", 0o644)
        self.race("memory", str(self.memory_opens), ".git/hooks/pre-commit", ".gix/hooks/pre-commit")

    def test_two_symlinks_exchanged(self):
        self.write("plain.txt", "plain\n", 0o644)
        os.symlink(".git/hooks/pre-commit", self.path("to-hook"))
        os.symlink("plain.txt", self.path("to-plain"))
        self.race("exchange", str(self.exchange_opens), "to-hook", "to-plain", "to-plain")

    def test_a_directory_exchanged_with_a_symlink(self):
        os.makedirs(self.path("hooks"))
        self.write("hooks/pre-commit", "plain\n", 0o644)
        os.symlink(".git/hooks", self.path("hooks-link"))
        self.race("exchange", str(self.exchange_opens), "hooks", "hooks-link", "hooks/pre-commit")


class RaceUnderLandlock(Race):
    backend = "landlock"
    memory_opens = 100000
    exchange_opens = 25000


class RaceUnderBwrap(Race):
    """bwrap's mounts decide, whatever the supervisor reads: fewer opens show its watching changes nothing."""

    backend = "bwrap"
    memory_opens = 30000
    exchange_opens = 15000


# -------------------------------------------------------------------------------------------- git --

# Everyday git in the workspace: nothing here touches a hook or a config.
GIT_WORK = r"""
set -e
echo two > b; git add b; git commit -qm two
git branch side
echo dirty >> notes.txt; git stash -q; git stash pop -q; git commit -qam three
git checkout -q side; echo four > c; git add c; git commit -qm four
git rebase -q main
git checkout -q main
git gc -q
git worktree add -q linked -b linked
(cd linked && echo w > w && git add w && git commit -qm w)
git worktree remove linked
(cd library && echo m > m && git add m && git commit -qm in-submodule)
git add library && git commit -qm bump
git submodule status
git -c protocol.file.allow=always submodule foreach -q 'git log -1 --format=%s'
echo git-done
"""
# What bwrap refuses (they write .git/config and .git/modules/library/config): allowed to fail, never to write.
GIT_CONFIG_WRITERS = r"""
git -c protocol.file.allow=always submodule update --init -q
git config core.hooksPath /var/tmp
git -C library config core.fsmonitor 'touch /var/tmp/dsh-write-intent-fsmonitor'
echo config-writers-done
"""


class Git(Workspace):
    """git on the workspace repository, a submodule from a local repository outside the workspace."""

    def setUp(self):
        super().setUp()
        self.library = os.path.join(self.base, "library")
        host_git(self.env, "init", "-q", "-b", "main", self.library)
        with open(os.path.join(self.library, "lib.txt"), "w", encoding="utf-8") as handle:
            handle.write("lib\n")
        host_git(self.env, "add", "lib.txt", cwd=self.library)
        host_git(self.env, "commit", "-q", "-m", "lib", cwd=self.library)
        host_git(self.env, "-c", "protocol.file.allow=always", "submodule", "add", "-q", self.library, "library",
                 cwd=self.workspace)
        host_git(self.env, "commit", "-q", "-m", "submodule", cwd=self.workspace)
        with open(self.path(".git/modules/library/hooks/post-checkout"), "w", encoding="utf-8") as handle:
            handle.write(HOOK)

    def held(self):
        """The hooks and configs of the repository and of its submodule."""
        names = (".git/config", ".git/hooks/pre-commit", ".git/modules/library/config",
                 ".git/modules/library/hooks/post-checkout", ".gitmodules")
        listings = (".git/hooks", ".git/modules/library/hooks")
        return ({name: entry_state(self.path(name)) for name in names},
                {name: sorted(os.listdir(self.path(name))) for name in listings})

    def test_everyday_git_works_and_holds_the_hooks_and_config(self):
        before = self.held()
        result = self.run_confined(["sh", "-c", GIT_WORK])
        self.assertIn("git-done", result.stdout, result.stderr)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(self.held(), before)
        self.assertEqual(host_git(self.env, "log", "-1", "--format=%s", cwd=self.workspace).strip(), "bump")
        self.assertEqual(host_git(self.env, "log", "-1", "--format=%s", cwd=self.path("library")).strip(),
                         "in-submodule")

    def test_git_that_writes_a_config_is_refused_on_disk(self):
        before = self.held()
        result = self.run_confined(["sh", "-c", GIT_CONFIG_WRITERS])
        self.assertIn("config-writers-done", result.stdout, result.stderr)
        self.assertEqual(self.held(), before, result.stderr)
        self.assertFalse(os.path.lexists("/var/tmp/dsh-write-intent-fsmonitor"))


class GitUnderLandlock(Git):
    backend = "landlock"


class GitUnderBwrap(Git):
    backend = "bwrap"


# ---------------------------------------------------------------------------------------- records --

class Records(Workspace):
    """The bash tool's result names each refused write: the enforcing layer's record, not stderr's text."""

    def bash(self, root, command):
        done = subprocess.run([BIN, "bash", "--backend", self.backend, "--mode", "workspace-write", "--root", root,
                               "--json", "--", command], cwd=root, env=self.env, capture_output=True, text=True,
                              timeout=PATIENCE, check=False)
        try:
            return json.loads(done.stdout)
        except ValueError:
            self.fail(f"no result object: {done.stdout!r} {done.stderr!r}")

    def assert_recorded(self, result, expected):
        """Each (op, path, rule) expected is among the records."""
        records = [(record["op"], record["path"], record["rule"]) for record in result["refusedWrites"]]
        for record in expected:
            self.assertIn(record, records, f"under {self.backend}")

    def test_each_refusal_has_its_path_and_rule(self):
        outside = f"/etc/dsh-write-intent-{os.getpid()}-{self.backend}"
        hook, config, mcp = self.path(".git/hooks/pre-commit"), self.path(".git/config"), self.path(".mcp.json")
        before = {name: entry_state(name) for name in (hook, config, mcp)}
        command = (f"echo evil > {outside}; echo evil > {hook}; echo evil > x.new; mv -f x.new {config}; "
                   f"mkdir {mcp}; rm -f {hook}; echo fine > {self.path('notes.txt')}; true")
        try:
            result = self.bash(self.workspace, command)
        finally:
            leaked = os.path.lexists(outside)
            if leaked:
                os.unlink(outside)
        self.assertFalse(leaked, f"{outside} was written on the host")
        self.assertEqual({name: entry_state(name) for name in before}, before)
        self.assertEqual(read(self.path("notes.txt")), "fine\n")
        self.assert_recorded(result, [("open", outside, "outside-roots"), ("open", hook, "protected-subpath"),
                                      ("rename", config, "protected-subpath"), ("mkdir", mcp, "protected-subpath"),
                                      ("unlink", hook, "protected-subpath")])
        written = (self.path("notes.txt"), self.path("x.new"))
        self.assertFalse([record for record in result["refusedWrites"] if record["path"] in written],
                         result["refusedWrites"])

    def test_the_sandboxs_own_file_has_its_own_rule(self):
        # The home as the root: the sandbox's config directory lies inside it, and is its own.
        own = os.path.join(self.home, ".config", "dsh-sandbox")
        os.makedirs(own)
        config = os.path.join(own, "config.json")
        result = self.bash(self.home, f"echo '{{\"mode\": \"danger-full-access\"}}' > {config}; true")
        self.assertFalse(os.path.lexists(config), f"{config} was written under {self.backend}")
        self.assert_recorded(result, [("open", config, "own-file")])


class RecordsUnderLandlock(Records):
    backend = "landlock"


class RecordsUnderBwrap(Records):
    backend = "bwrap"


# The shared bases hold no case of their own.
del Workspace, OrdinaryWrites, Race, Git, Records

if __name__ == "__main__":
    sys.exit(run_suite(__name__))
