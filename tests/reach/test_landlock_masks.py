#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Masks under Landlock (issue 22, item 3), through landlock-run, dsh-sandbox-exec and `dsh-sandbox run`.

Each case plants credentials holding a unique marker in a throwaway home under the scratch, runs a
real confined shell that tries to print them (by name, through a symlink, /proc/self/root, grep -r,
a rename or link into a writable directory, an open the write supervisor performs), and judges what
it printed and what is on disk.  A credential created while the command waits on a FIFO stays
unreadable.  A mask inside the writable root is reported partial, never full, and cannot be moved or
linked to where a later call would read it.

Output is unittest's verbose form, one line per case, then "N passed, N failed, N skipped".
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "livability"))
from livability import BIN, SCRATCH, bwrap_works, landlock_abi, run_suite  # noqa: E402

PATIENCE = 120   # an upper bound for one command, never a measurement
LANDLOCK_RUN = os.environ.get("LANDLOCK_RUN_BIN", "")
SANDBOX_EXEC = os.path.join(os.path.dirname(LANDLOCK_RUN), "dsh-sandbox-exec") if LANDLOCK_RUN else ""
KEY, AWS, NETRC, LATE = "MARK-KEY-3f1c", "MARK-AWS-77a0", "MARK-NETRC-90be", "MARK-LATE-c41d"


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as stream:
        stream.write(text)


def read(path):
    with open(path, encoding="utf-8") as stream:
        return stream.read()


class Home:
    """A throwaway home with a key (and its .pub, known_hosts), ~/.aws/credentials, a project."""

    def __init__(self):
        os.makedirs(SCRATCH, exist_ok=True)
        self.root = os.path.realpath(tempfile.mkdtemp(prefix="masks-", dir=SCRATCH))
        self.home = os.path.join(self.root, "home")
        write(self.at(".ssh/id_ed25519"), KEY + "\n")
        write(self.at(".ssh/id_ed25519.pub"), "ssh-ed25519 PUBLIC\n")
        write(self.at(".ssh/known_hosts"), "host KNOWN\n")
        write(self.at(".aws/credentials"), AWS + "\n")
        write(self.at("proj/README"), "project\n")
        write(self.at(".gitconfig"), "[user]\n\tname = t\n")
        os.symlink(".ssh/id_ed25519", self.at("key-link"))

    def at(self, name):
        return os.path.join(self.home, name)

    def remove(self):
        shutil.rmtree(self.root, ignore_errors=True)


def landlock_run(arguments, script, **kwargs):
    return subprocess.run([LANDLOCK_RUN, *arguments, "--", "sh", "-c", script], capture_output=True, text=True,
                          timeout=PATIENCE, check=False, **kwargs)


def dsh_run(home, mode, root, script, extra=()):
    env = dict(os.environ, HOME=home.home, **OUTSIDE_ENVIRONMENT)
    return subprocess.run([BIN, "run", "--backend", "landlock", "--mode", mode, "--root", root, *extra, "--",
                           "sh", "-c", script], capture_output=True, text=True, timeout=PATIENCE, check=False,
                          env=env, cwd=root)


def dsh_confine(home, mode, root):
    env = dict(os.environ, HOME=home.home)
    done = subprocess.run([BIN, "confine", "--backend", "landlock", "--mode", mode, "--root", root, "--", "true"],
                          capture_output=True, text=True, timeout=PATIENCE, check=False, env=env, cwd=root)
    return json.loads(done.stdout)


# Everything a command might try to print the planted credentials by.
TRY_EVERYTHING = r"""
cat ~/.ssh/id_ed25519 ~/.aws/credentials ~/.netrc ~/key-link 2>/dev/null
cat /proc/self/root$HOME/.ssh/id_ed25519 2>/dev/null
grep -r MARK- $HOME 2>/dev/null
python3 -c 'import sys; open(sys.argv[1], "r+").read()' ~/.ssh/id_ed25519 2>/dev/null && echo SUPERVISOR-OPENED
cat ~/.ssh/id_ed25519.pub ~/.ssh/known_hosts ~/.gitconfig /etc/hostname >/dev/null && echo SIBLINGS-READ
# The processes outside the domain (the launcher or stand-in, the supervisor, init): their root and environ.
grandparent=$(cut -d' ' -f4 /proc/$PPID/stat)
for p in $PPID $grandparent 1; do
  cat /proc/$p/root$HOME/.ssh/id_ed25519 /proc/$p/cwd/.ssh/id_ed25519 2>/dev/null
  tr '\0' '\n' < /proc/$p/environ 2>/dev/null | grep MARK-
done
"""
# In the environment of whatever spawns the command (never printed by the command from its own).
OUTSIDE_ENVIRONMENT = {"DSH_TEST_OUTSIDE": "MARK-ENV-5e2a"}


@unittest.skipUnless(landlock_abi() >= 3, "this kernel has no Landlock ABI >= 3")
class LandlockRunMasks(unittest.TestCase):
    def setUp(self):
        self.home = Home()
        self.work = os.path.join(self.home.root, "work")
        os.makedirs(self.work)
        self.masks = ["--mask", self.home.at(".ssh/id_ed25519"), "--mask", self.home.at(".aws"),
                      "--mask", self.home.at(".netrc"), "--mask-closed", self.home.at(".ssh")]

    def tearDown(self):
        self.home.remove()

    def test_masked_unreadable_siblings_read(self):
        done = landlock_run(["--ro", "/", "--rw", "/dev/null", *self.masks], TRY_EVERYTHING,
                            env=dict(os.environ, HOME=self.home.home, **OUTSIDE_ENVIRONMENT), cwd=self.home.home)
        self.assertNotIn("MARK-", done.stdout + done.stderr)
        self.assertNotIn("SUPERVISOR-OPENED", done.stdout)
        self.assertIn("SIBLINGS-READ", done.stdout, done.stderr)

    def test_rename_and_link_into_a_writable_directory_refused(self):
        key = self.home.at(".ssh/id_ed25519")
        script = f"mv {key} {self.work}/k; ln {key} {self.work}/l; mv {self.home.at('.ssh')} {self.work}/s; " \
                 f"cp -r {self.home.at('.aws')} {self.work}/a; cat {self.work}/* {self.work}/*/* 2>/dev/null; true"
        done = landlock_run(["--ro", "/", "--rw", "/dev/null", "--rw", self.work, *self.masks], script)
        self.assertNotIn("MARK-", done.stdout)
        self.assertEqual(read(key), KEY + "\n")
        self.assertFalse(os.path.exists(os.path.join(self.work, "k")))
        self.assertFalse(os.path.exists(os.path.join(self.work, "l")))
        self.assertFalse(os.path.exists(os.path.join(self.work, "s")))
        self.assertEqual(read(self.home.at(".aws/credentials")), AWS + "\n")
        self.assertFalse(os.path.exists(os.path.join(self.work, "a", "credentials")))

    def test_created_after_start_unreadable(self):
        fifo = os.path.join(self.home.root, "go")
        os.mkfifo(fifo)
        script = f"read line < {fifo}; cat ~/.netrc ~/.ssh/id_new ~/.aws/config ~/late 2>&1; " \
                 f"cat ~/proj/late && echo GRANTED-DIR-READ"
        child = subprocess.Popen([LANDLOCK_RUN, "--ro", "/", "--rw", "/dev/null", *self.masks, "--", "sh", "-c",
                                  script], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                 env=dict(os.environ, HOME=self.home.home))
        # Written once the command runs (it blocks opening the FIFO until this side opens it).
        with open(fifo, "w", encoding="utf-8") as go:
            for name in (".netrc", ".ssh/id_new", ".aws/config", "late", "proj/late"):
                write(self.home.at(name), LATE + "\n")
            go.write("go\n")
        output, _ = child.communicate(timeout=PATIENCE)
        self.assertEqual(output.count(LATE), 1, output)       # only the new file of a directory granted whole
        self.assertIn("GRANTED-DIR-READ", output)
        self.assertEqual(output.count("Permission denied"), 4, output)

    def test_a_grant_over_a_mask_refused(self):
        done = landlock_run(["--ro", "/", "--rw", self.home.home, *self.masks], "cat ~/.ssh/id_ed25519")
        self.assertEqual(done.returncode, 125)
        self.assertIn("would make the mask", done.stderr)
        self.assertNotIn(KEY, done.stdout)

    def test_a_mask_not_canonical_refused(self):
        done = landlock_run(["--ro", "/", "--mask", self.home.at("proj/../.ssh/id_ed25519")], "true")
        self.assertEqual(done.returncode, 125)
        self.assertIn("--mask: not a canonical absolute path", done.stderr)


@unittest.skipUnless(landlock_abi() >= 3, "this kernel has no Landlock ABI >= 3")
class RunMasks(unittest.TestCase):
    def setUp(self):
        self.home = Home()

    def tearDown(self):
        self.home.remove()

    def test_read_only_nothing_secret_printed(self):
        done = dsh_run(self.home, "read-only", self.home.at("proj"), TRY_EVERYTHING)
        self.assertNotIn("MARK-", done.stdout + done.stderr)
        self.assertNotIn("SUPERVISOR-OPENED", done.stdout)
        self.assertIn("SIBLINGS-READ", done.stdout, done.stderr)

    def test_workspace_write_in_a_project_holds_every_mask(self):
        done = dsh_run(self.home, "workspace-write", self.home.at("proj"),
                       TRY_EVERYTHING + "echo made > made && cat made")
        self.assertNotIn("MARK-", done.stdout + done.stderr)
        self.assertIn("made", done.stdout)
        facts = dsh_confine(self.home, "workspace-write", self.home.at("proj"))
        self.assertNotIn("lies inside the writable root", " ".join(facts.get("partialReasons") or []))
        argv = facts["argv"]
        self.assertIn(self.home.at(".ssh/id_ed25519"), argv)
        self.assertEqual(argv[argv.index(self.home.at(".ssh")) - 1], "--mask-closed")

    def test_workspace_the_home_partial_naming_the_mask(self):
        facts = dsh_confine(self.home, "workspace-write", self.home.home)
        self.assertEqual(facts["enforcement"], "partial")
        reasons = " ".join(facts["partialReasons"])
        self.assertIn(f"the mask {self.home.at('.ssh/id_ed25519')} lies inside the writable root "
                      f"{self.home.home}", reasons)
        # Not held, so not passed: the launcher would refuse a --rw over a mask.  The passwd home's still are.
        argv = facts["argv"][:facts["argv"].index("--")]
        passed = [argv[i + 1] for i, word in enumerate(argv) if word in ("--mask", "--mask-closed")]
        self.assertFalse([path for path in passed if path.startswith(self.home.home + "/")], passed)
        self.assertIn(self.home.at(".ssh/id_ed25519"), argv)   # as --protect: no move, no link

    def test_workspace_the_home_no_move_or_link_reaches_a_later_call(self):
        key = self.home.at(".ssh/id_ed25519")
        first = dsh_run(self.home, "workspace-write", self.home.home,
                        f"ln {key} ~/proj/stolen; mv {key} ~/proj/moved; mv ~/.ssh ~/ssh2; "
                        f"mv ~/.aws ~/proj/aws; true")
        self.assertIn("partial", first.stderr)
        self.assertEqual(read(key), KEY + "\n")
        for name in ("proj/stolen", "proj/moved", "ssh2", "proj/aws"):
            self.assertFalse(os.path.lexists(self.home.at(name)), name)
        second = dsh_run(self.home, "workspace-write", self.home.at("proj"), "grep -r MARK- $HOME; true")
        self.assertNotIn("MARK-", second.stdout)


@unittest.skipUnless(landlock_abi() >= 2 and bwrap_works(), "no bwrap sandbox or no Landlock ABI >= 2 here")
class SandboxExecReadLayer(unittest.TestCase):
    """dsh-sandbox-exec's own domain under bwrap: an absent mask and a closed directory hold."""

    def setUp(self):
        self.home = Home()

    def tearDown(self):
        self.home.remove()

    def test_absent_and_closed_masks_hold_inside_bwrap(self):
        fifo = os.path.join(self.home.root, "go")
        os.mkfifo(fifo)
        script = f"read line < {fifo}; cat ~/.netrc ~/.ssh/id_new ~/.ssh/id_ed25519 2>/dev/null; " \
                 f"cat ~/.ssh/id_ed25519.pub >/dev/null && echo PUB-READ"
        child = subprocess.Popen(["/usr/bin/bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
                                  "--", SANDBOX_EXEC, "--mask", self.home.at(".netrc"),
                                  "--mask", self.home.at(".ssh/id_ed25519"), "--mask-closed", self.home.at(".ssh"),
                                  "--", "sh", "-c", script], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                 text=True, env=dict(os.environ, HOME=self.home.home))
        with open(fifo, "w", encoding="utf-8") as go:
            write(self.home.at(".netrc"), LATE + "\n")
            write(self.home.at(".ssh/id_new"), LATE + "\n")
            go.write("go\n")
        output, _ = child.communicate(timeout=PATIENCE)
        self.assertNotIn("MARK-", output)
        self.assertIn("PUB-READ", output)


if __name__ == "__main__":
    sys.exit(run_suite(__name__))
