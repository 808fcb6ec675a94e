#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The masks under bwrap (issue 22, item 2), on the real bwrap and kernel.

A throwaway home (HOME=/var/tmp/...) holds credentials the defaults mask, each with a marker: an SSH
private key beside its public key and known_hosts, ~/.aws/credentials, ~/.config/gh/hosts.yml, ~/.netrc.
The confined command is python3 inside `dsh-sandbox run --backend bwrap` (or confine's argv, spawned
here), with the workspace being that home itself under workspace-write: it reads, writes, renames,
unlinks and links what it can and prints each errno.  Every claim of src/provider/bwrap-masks.c is
judged by what the command saw *and* on disk: the host's credential files keep their bytes, mode and
place, and a second call, which plans its masks by name again, still sees no marker under any name.

Output: unittest's verbose form, a "# SKIP: case: reason" line per skip, then "N passed, N failed,
N skipped".
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import unittest
import uuid

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "livability"))
import livability  # noqa: E402

BIN = livability.BIN
BUILD_DIR = os.path.dirname(os.path.abspath(BIN)) if BIN else ""
MASK_FILE = os.path.join(BUILD_DIR, "dsh-sandbox-mask")
MODES = ("read-only", "workspace-write")

# The command's own probe: each operation named on the command line, its outcome printed as "NAME RESULT",
# RESULT "ok" or the errno's name (EROFS, EBUSY, EXDEV, ...).
PROBE = textwrap.dedent("""
    import errno, os, sys
    home = os.environ["HOME"]
    def attempt(name, action):
        try:
            action()
            print(name, "ok")
        except OSError as failure:
            print(name, errno.errorcode.get(failure.errno, failure.errno))
    def write(path, flags):
        descriptor = os.open(path, flags, 0o600)
        os.write(descriptor, b"planted")
        os.close(descriptor)
    key = os.path.join(home, ".ssh", "id_ed25519")
    docker = os.path.join(home, ".docker")
    operations = {
        "write_key": lambda: write(key, os.O_WRONLY),
        "truncate_key": lambda: write(key, os.O_WRONLY | os.O_TRUNC),
        "append_key": lambda: write(key, os.O_WRONLY | os.O_APPEND),
        "create_in_aws": lambda: write(os.path.join(home, ".aws", "planted"), os.O_WRONLY | os.O_CREAT),
        "overwrite_aws_credentials": lambda: write(os.path.join(home, ".aws", "credentials"),
                                                   os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
        "mkdir_in_aws": lambda: os.mkdir(os.path.join(home, ".aws", "d")),
        "chmod_key": lambda: os.chmod(key, 0o644),
        "chmod_aws": lambda: os.chmod(os.path.join(home, ".aws"), 0o777),
        "rename_key": lambda: os.rename(key, os.path.join(home, "stolen-key")),
        "unlink_key": lambda: os.unlink(key),
        "link_key": lambda: os.link(key, os.path.join(home, "linked-key")),
        "rename_ssh": lambda: os.rename(os.path.join(home, ".ssh"), os.path.join(home, "moved-ssh")),
        "rename_aws": lambda: os.rename(os.path.join(home, ".aws"), os.path.join(home, "moved-aws")),
        "rmdir_aws": lambda: os.rmdir(os.path.join(home, ".aws")),
        "rename_config": lambda: os.rename(os.path.join(home, ".config"), os.path.join(home, "moved-config")),
        "rename_gh": lambda: os.rename(os.path.join(home, ".config", "gh"), os.path.join(home, ".config", "moved-gh")),
        "rename_docker": lambda: os.rename(docker, os.path.join(home, "moved-docker")),
        "unlink_docker_config": lambda: os.unlink(os.path.join(docker, "config.json")),
        "rename_docker_config": lambda: os.rename(os.path.join(docker, "config.json"), os.path.join(docker, "moved")),
        "link_docker_config": lambda: os.link(os.path.join(docker, "config.json"), os.path.join(docker, "linked")),
        "rename_over_key": lambda: (write(os.path.join(home, "decoy"), os.O_WRONLY | os.O_CREAT),
                                    os.rename(os.path.join(home, "decoy"), key)),
        "symlink_key": lambda: os.symlink(key, os.path.join(home, "key-link")),
    }
    for name in sys.argv[1:]:
        attempt(name, operations[name])
""")

# What the command prints of everything it can read in the home: every file's bytes, under every name.
READ_ALL = "find \"$HOME\" -xdev -type f -o -type l | while read -r f; do echo \"== $f\"; cat \"$f\"; done 2>&1; " \
           "find \"$HOME\" -type f -exec cat {} + 2>&1; :"


def outcomes(stdout):
    return dict(line.split(" ", 1) for line in stdout.splitlines() if " " in line)


class BwrapMasks(unittest.TestCase):
    def setUp(self):
        if not livability.bwrap_works():
            self.skipTest("bwrap cannot make a sandbox on this host")
        self.base = tempfile.mkdtemp(prefix="reach-bwrap-masks-", dir=self.scratch())
        self.home = os.path.join(self.base, "home")
        self.markers = {}
        self.plant(".ssh/id_ed25519", "key")
        self.plant(".aws/credentials", "aws")
        self.plant(".config/gh/hosts.yml", "gh")
        self.plant(".netrc", "netrc")
        self.plant(".docker/config.json", "docker")
        self.write(".ssh/id_ed25519.pub", "ssh-ed25519 AAAA public\n")
        self.write(".ssh/known_hosts", "host.example ssh-ed25519 AAAA\n")
        self.write(".gitconfig", "[user]\n\tname = tester\n")
        os.chmod(os.path.join(self.home, ".ssh/id_ed25519"), 0o600)
        self.before = self.snapshot()
        self.environment = dict(os.environ, HOME=self.home)
        self.environment.pop("DSH_SANDBOX_CONFIG", None)
        self.environment["XDG_CONFIG_HOME"] = os.path.join(self.base, "no-config")

    def tearDown(self):
        shutil.rmtree(self.base, ignore_errors=True)

    @staticmethod
    def scratch():
        os.makedirs(livability.SCRATCH, exist_ok=True)
        return livability.SCRATCH

    def write(self, relative, text):
        path = os.path.join(self.home, relative)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
        return path

    def plant(self, relative, name):
        marker = f"SECRET-{name}-{uuid.uuid4().hex}"
        self.markers[name] = marker
        self.write(relative, marker + "\n")

    def snapshot(self):
        """Every credential's bytes and mode, and what .aws and .ssh hold, as the host sees them."""
        state = {}
        for relative in (".ssh/id_ed25519", ".aws/credentials", ".config/gh/hosts.yml", ".netrc", ".docker/config.json"):
            path = os.path.join(self.home, relative)
            with open(path, "rb") as handle:
                state[relative] = (handle.read(), os.stat(path).st_mode)
        for relative in (".aws", ".ssh", ".config", ".config/gh", ".docker"):
            state[relative + "/"] = (sorted(os.listdir(os.path.join(self.home, relative))),
                                     os.stat(os.path.join(self.home, relative)).st_mode)
        return state

    def assert_host_unchanged(self):
        self.assertEqual(self.snapshot(), self.before, "a credential on the host changed")
        for stray in ("stolen-key", "linked-key", "moved-ssh", "moved-aws", "moved-config", "moved-docker"):
            self.assertFalse(os.path.lexists(os.path.join(self.home, stray)), f"{stray} appeared on the host")

    def assert_no_marker(self, text):
        for name, marker in self.markers.items():
            self.assertNotIn(marker, text, f"the {name} credential reached the command")

    def run_confined(self, mode, command, extra=(), config=None):
        argv = [BIN, "run", "--backend", "bwrap", "--mode", mode, "--root", self.home]
        if config is not None:
            path = os.path.join(self.base, "config.json")
            with open(path, "w", encoding="utf-8") as handle:
                json.dump(config, handle)
            argv += ["--config", path]
        return subprocess.run(argv + list(extra) + ["--"] + command, cwd=self.home, env=self.environment,
                              capture_output=True, text=True, timeout=120, check=False)

    def probe(self, mode, *operations):
        result = self.run_confined(mode, ["python3", "-c", PROBE] + list(operations))
        self.assertEqual(result.returncode, 0, result.stderr)
        return outcomes(result.stdout), result

    # ------------------------------------------------------------------------------------------ reading --

    def test_masked_file_reads_empty_and_directory_lists_empty(self):
        for mode in MODES:
            with self.subTest(mode=mode):
                result = self.run_confined(mode, ["sh", "-c",
                                                  "wc -c < ~/.ssh/id_ed25519; ls -A ~/.aws | wc -l; cat ~/.netrc "
                                                  "~/.config/gh/hosts.yml ~/.ssh/id_ed25519; "
                                                  "stat -c '%a' ~/.aws; cat ~/.ssh/id_ed25519.pub ~/.ssh/known_hosts "
                                                  "~/.gitconfig"])
                self.assertEqual(result.returncode, 0, result.stderr)
                lines = result.stdout.splitlines()
                self.assertEqual(lines[:2], ["0", "0"], result.stdout)
                self.assertEqual(lines[2], "700", "a masked directory is an empty 0700 tmpfs")
                self.assert_no_marker(result.stdout + result.stderr)
                # What is not a secret stays readable: the public key, known_hosts, ~/.gitconfig.
                self.assertIn("ssh-ed25519 AAAA public", result.stdout)
                self.assertIn("host.example", result.stdout)
                self.assertIn("name = tester", result.stdout)

    # ------------------------------------------------------------------------------------------ writing --

    def test_writes_to_masks_fail_and_nothing_changes_on_disk(self):
        writes = ("write_key", "truncate_key", "append_key", "create_in_aws", "overwrite_aws_credentials",
                  "mkdir_in_aws")
        for mode in MODES:
            with self.subTest(mode=mode):
                seen, result = self.probe(mode, *writes)
                for name in writes:
                    # The mask file is 0444 too: an open for writing without O_TRUNC meets its mode (EACCES, uid 0
                    # has no CAP_DAC_OVERRIDE) before the read-only mount; whatever comes first, it fails.
                    allowed = ("EROFS", "EACCES") if name in ("write_key", "append_key") else ("EROFS",)
                    self.assertIn(seen.get(name), allowed, f"{name}: {result.stdout}")
                self.assert_host_unchanged()

    def test_metadata_of_masks_is_refused_not_performed_on_the_host(self):
        # Under workspace-write the supervisor performs chmod beneath the roots, on the host's directory,
        # where no mask is mounted: a mask must be held back there, or the real key's mode would change.
        for mode in MODES:
            with self.subTest(mode=mode):
                seen, result = self.probe(mode, "chmod_key", "chmod_aws")
                for name in ("chmod_key", "chmod_aws"):
                    self.assertNotEqual(seen.get(name), "ok", f"{name}: {result.stdout}")
                self.assert_host_unchanged()

    def test_a_device_or_a_writable_tmpfs_would_swallow_the_write_the_mask_file_refuses(self):
        # The control: the same write through the two masks peers use, on the real bwrap, seems to succeed
        # and vanishes; through the empty mask file it fails with EROFS.  Each leaves the host file alone.
        key = os.path.join(self.home, ".ssh/id_ed25519")
        aws = os.path.join(self.home, ".aws")
        write = "echo planted > \"$1\" && echo ok || echo failed"
        cases = {
            "/dev/null": (["--dev-bind", "/dev/null", key], key, "ok"),
            "writable tmpfs": (["--tmpfs", aws], os.path.join(aws, "credentials"), "ok"),
            "the mask file": (["--ro-bind", MASK_FILE, key], key, "failed"),
            "a read-only tmpfs": (["--tmpfs", aws, "--remount-ro", aws], os.path.join(aws, "credentials"),
                                  "failed"),
        }
        for name, (mounts, target, expected) in cases.items():
            with self.subTest(mask=name):
                result = subprocess.run(["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--bind", self.home,
                                         self.home] + mounts + ["--cap-drop", "ALL", "sh", "-c", write, "sh",
                                                                target],
                                        capture_output=True, text=True, timeout=60, check=False)
                self.assertEqual(result.stdout.strip(), expected, result.stderr)
                if expected == "failed":
                    self.assertIn("Read-only file system", result.stderr)
                self.assert_host_unchanged()

    # -------------------------------------------------------------------------- rename, unlink, link --

    def test_rename_unlink_and_link_tricks_fail_and_a_second_call_still_masks(self):
        # ~/.ssh is one of the sandbox's own (the remote's ssh reads it): the shield binds it read-only, so its
        # tricks fail before the masks are reached; ~/.docker and ~/.config/gh are plain directories of the
        # workspace, where only the masks' own mounts and pins stand in the way.
        failing = ("rename_key", "unlink_key", "link_key", "rename_over_key", "rename_ssh")
        expected = {
            # A mount point cannot be removed or renamed, and a link to it crosses mounts.
            "unlink_docker_config": "EBUSY", "rename_docker_config": "EBUSY", "link_docker_config": "EXDEV",
            # Pinned: a directory between the workspace and a mask is a mount point of its own.  Without the
            # pin the same rename would succeed (same mount), and a later call find no ~/.docker to mask.
            "rename_docker": "EBUSY", "rename_gh": "EBUSY", "rename_config": "EBUSY",
            # A masked directory is a mount point itself.
            "rename_aws": "EBUSY", "rmdir_aws": "EBUSY",
        }
        seen, result = self.probe("workspace-write", *failing, *expected, "symlink_key")
        for name, errno_name in expected.items():
            self.assertEqual(seen.get(name), errno_name, f"{name}: {result.stdout}")
        for name in failing:
            self.assertNotIn(seen.get(name), ("ok", None), f"{name}: {result.stdout}")
        self.assert_no_marker(result.stdout + result.stderr)
        self.assert_host_unchanged()
        # The symlink the command could make points at the mask: through it, too, a later call reads nothing.
        for mode in MODES:
            with self.subTest(second_call=mode):
                again = self.run_confined(mode, ["sh", "-c", READ_ALL])
                self.assertEqual(again.returncode, 0, again.stderr)
                self.assert_no_marker(again.stdout + again.stderr)
                self.assertIn("ssh-ed25519 AAAA public", again.stdout)

    def test_a_symlinked_mask_repointed_by_one_call_is_not_read_by_the_next(self):
        # ~/.aws is a link to the credentials kept elsewhere (a dotfile manager's way).  The link lies in the
        # workspace, where nothing pins it: the first call points it at an empty directory, and the second,
        # planning ~/.aws by name again, must still not read the old target — or the calls must say that
        # this mask is not held.
        shutil.rmtree(os.path.join(self.home, ".aws"))
        kept = os.path.join(self.base, "kept", "aws")
        os.makedirs(kept)
        marker = f"SECRET-kept-aws-{uuid.uuid4().hex}"
        with open(os.path.join(kept, "credentials"), "w", encoding="utf-8") as handle:
            handle.write(marker + "\n")
        os.symlink(kept, os.path.join(self.home, ".aws"))
        os.makedirs(os.path.join(self.home, "empty"))
        first = self.run_confined("workspace-write", ["sh", "-c", f"cat {kept}/credentials; "
                                                      f"ln -sfn {self.home}/empty {self.home}/.aws"])
        self.assertNotIn(marker, first.stdout + first.stderr)
        second = self.run_confined("workspace-write", ["cat", os.path.join(kept, "credentials")])
        said = [line for line in (first.stderr + second.stderr).splitlines()
                if "partial" in line and os.path.join(self.home, ".aws") in line and "symlink" in line]
        if not said:
            self.assertNotIn(marker, second.stdout + second.stderr,
                             "a repointed ~/.aws uncovered its old target in a later call, and no call said so")

    # ------------------------------------------------------------------------------------- confine --

    def test_confine_argv_mounts_the_masks_last_and_masks_when_spawned(self):
        for mode in MODES:
            with self.subTest(mode=mode):
                result = subprocess.run([BIN, "confine", "--backend", "bwrap", "--mode", mode, "--root", self.home,
                                         "--", "sh", "-c", READ_ALL],
                                        cwd=self.home, env=self.environment, capture_output=True, text=True,
                                        timeout=60, check=False)
                self.assertEqual(result.returncode, 0, result.stderr)
                facts = json.loads(result.stdout)
                argv = facts["argv"]
                key = os.path.join(self.home, ".ssh/id_ed25519")
                aws = os.path.join(self.home, ".aws")
                mask = argv.index(key) - 2
                self.assertEqual(argv[mask:mask + 3], ["--ro-bind", os.path.realpath(MASK_FILE), key])
                tmpfs = argv.index(aws)
                self.assertEqual(argv[tmpfs - 3:tmpfs + 3], ["--perms", "0700", "--tmpfs", aws, "--remount-ro", aws])
                # Made after every other mount: from the first mask on, nothing but masks until the variables.
                first = min(mask, tmpfs - 3)
                tail = argv[first:argv.index("--setenv") if "--setenv" in argv else argv.index("--")]
                while tail:
                    if tail[0] == "--ro-bind" and tail[1] == os.path.realpath(MASK_FILE):
                        tail = tail[3:]
                    elif tail[:3] == ["--perms", "0700", "--tmpfs"] and tail[4] == "--remount-ro" and tail[3] == tail[5]:
                        tail = tail[6:]
                    else:
                        self.fail(f"a mount after the masks: {tail}")
                if mode == "workspace-write":
                    ssh = os.path.join(self.home, ".ssh")
                    pin = argv.index(ssh)
                    self.assertEqual(argv[pin - 1:pin + 2], ["--bind", ssh, ssh], "~/.ssh is pinned")
                    self.assertLess(pin, mask)
                spawned = subprocess.run(argv, cwd=self.home, env=self.environment, capture_output=True, text=True,
                                         timeout=60, check=False)
                self.assertEqual(spawned.returncode, 0, spawned.stderr)
                self.assert_no_marker(spawned.stdout + spawned.stderr)
                self.assertIn("ssh-ed25519 AAAA public", spawned.stdout)
                # The facts name what is masked (and so held).
                for path in (key, aws, os.path.join(self.home, ".netrc")):
                    self.assertIn(path, facts.get("masked", []), facts)

    # ------------------------------------------------------------------------- not held, and said so --

    def test_an_absent_mask_inside_the_writable_root_is_partial_or_refused(self):
        kube = os.path.join(self.home, ".kube")
        result = self.run_confined("workspace-write", ["true"])
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn(f"the mask {kube} does not exist and lies inside the writable root {self.home}",
                      result.stderr)
        self.assertIn("partial enforcement under bwrap", result.stderr)
        # The closed ~/.ssh (a wildcard's directory) inside the root: a key made there during the call is
        # readable, and that is said too.
        self.assertIn(f"the names the masks of {os.path.join(self.home, '.ssh')} match lie inside the writable "
                      f"root {self.home}", result.stderr)
        refused = self.run_confined("workspace-write", ["sh", "-c", "echo ran > ran"], config={"requireMasks": True})
        self.assertEqual(refused.returncode, 125, refused.stderr)
        self.assertIn("requireMasks", refused.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.home, "ran")), "a refused call ran its command")
        # Read-only: nothing is writable, so nothing of that is said.
        quiet = self.run_confined("read-only", ["true"])
        self.assertEqual(quiet.returncode, 0, quiet.stderr)
        self.assertNotIn("the mask", quiet.stderr)

    def test_a_credential_created_during_the_call_outside_the_roots_stays_unreadable(self):
        # The workspace is a project beside the credentials, so the home itself is read-only to the command,
        # and a name made there while it runs falls to dsh-sandbox-exec's inner Landlock layer: an absent
        # mask (~/.kube/config) and a new match of a wildcard (~/.ssh/id_new).
        if livability.landlock_abi() < 2:
            self.skipTest("this kernel gives the command no Landlock domain of its own (ABI below 2)")
        project = os.path.join(self.home, "project")
        os.makedirs(project)
        go = os.path.join(self.base, "go")
        created = {"kube": ".kube/config", "new_key": ".ssh/id_new"}
        # The command says it runs, then waits (a bounded number of polls) until the credentials exist.
        script = (f"echo started; while [ ! -e {go} ] && [ ${{n:=0}} -lt 6000 ]; do n=$((n+1)); sleep 0.01; done; "
                  + "; ".join(f"cat ~/{relative}" for relative in created.values()) + "; :")
        for mode in MODES:
            with self.subTest(mode=mode):
                argv = [BIN, "run", "--backend", "bwrap", "--mode", mode, "--root", project, "--", "sh", "-c",
                        script]
                child = subprocess.Popen(argv, cwd=project, env=self.environment, stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE, text=True)
                first = child.stdout.readline()
                for name, relative in created.items():
                    self.plant(relative, name)
                open(go, "w", encoding="utf-8").close()
                stdout, stderr = child.communicate(timeout=120)
                self.assertEqual(first.strip(), "started", stderr)
                self.assertEqual(child.returncode, 0, stderr)
                self.assert_no_marker(stdout + stderr)
                self.assertEqual(stderr.count("Permission denied"), 2, stderr)
                shutil.rmtree(os.path.join(self.home, ".kube"))
                os.unlink(os.path.join(self.home, ".ssh/id_new"))
                os.unlink(go)

    def test_without_landlock_the_masks_still_mount_and_every_later_name_is_said(self):
        # A kernel without Landlock (simulated: its system calls fail ENOSYS for the whole call) gives the
        # command no domain of its own, so nothing keeps a name made during the call unreadable: the
        # existing masks still read empty, and each absent mask and closed directory is named as not held.
        no_landlock = os.environ.get("NO_LANDLOCK_EXEC_BIN", "")
        if not os.access(no_landlock, os.X_OK):
            self.skipTest("NO_LANDLOCK_EXEC_BIN is not built")
        argv = [no_landlock, BIN, "run", "--backend", "bwrap", "--mode", "read-only", "--root", self.home, "--",
                "sh", "-c", READ_ALL]
        result = subprocess.run(argv, cwd=self.home, env=self.environment, capture_output=True, text=True,
                                timeout=120, check=False)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assert_no_marker(result.stdout + result.stderr)
        self.assertIn(f"the mask {os.path.join(self.home, '.kube')} does not exist, and this kernel gives the "
                      "command no Landlock domain of its own", result.stderr)
        self.assertIn(f"the names the masks of {os.path.join(self.home, '.ssh')} match would be readable",
                      result.stderr)

    # ---------------------------------------------------------------------------------- the mask file --

    def test_a_missing_grown_or_writable_mask_file_refuses_the_call(self):
        launchers = os.path.join(self.base, "launchers")
        os.makedirs(launchers)
        for program in ("dsh-sandbox", "landlock-run", "dsh-sandbox-exec"):
            shutil.copy2(os.path.join(BUILD_DIR, program), launchers)
        mask = os.path.join(launchers, "dsh-sandbox-mask")
        installed = "/usr/local/libexec/dsh-sandbox-mask"

        def missing():
            if os.path.lexists(installed):
                self.skipTest(f"an installed {installed} stands in for a missing one")

        def grown():
            with open(mask, "w", encoding="utf-8") as handle:
                handle.write("not empty\n")

        def writable():
            open(mask, "w", encoding="utf-8").close()
            os.chmod(mask, 0o666)

        def symlink():
            os.symlink(MASK_FILE, mask)

        for name, make in {"missing": missing, "grown": grown, "writable": writable, "symlink": symlink}.items():
            with self.subTest(mask_file=name):
                if os.path.lexists(mask):
                    os.unlink(mask)
                make()
                result = subprocess.run([os.path.join(launchers, "dsh-sandbox"), "run", "--backend", "bwrap",
                                         "--mode", "read-only", "--root", self.home, "--", "cat",
                                         os.path.join(self.home, ".ssh/id_ed25519")],
                                        cwd=self.home, env=self.environment, capture_output=True, text=True,
                                        timeout=60, check=False)
                self.assertEqual(result.returncode, 125, result.stderr)
                self.assertIn("is missing or not an empty read-only file", result.stderr)
                self.assert_no_marker(result.stdout + result.stderr)


if __name__ == "__main__":
    sys.exit(livability.run_suite(__name__))
