#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Secrets in the environment never reach a confined command (issue 22, item 4), and the file guard refuses
masked paths (item 5), on the real kernel with real bwrap.

Every case plants secret variables, each holding a unique marker, in the environment the tool is started with
(AWS_SECRET_ACCESS_KEY, GITHUB_TOKEN, OPENAI_API_KEY, a lowercase `my_service_api_key`), and a plain variable that
must pass.  The command prints its environment, its /proc/self/environ, and the environ of every process it can
see in /proc — its parent, bwrap's pid 1, the stand-in, landlock-run, dsh-sandbox itself and this test — so a
secret kept anywhere within its reach shows.  Through `dsh-sandbox run` and `bash` (spawned by the library), and
through `confine`'s argv spawned by the test as a harness would, with its own environment, on both backends and
in both modes.  Then: --allow-env lets one name through, SSH_AUTH_SOCK passes only for an allowed socket, the
call's own variables survive any deny pattern, a kernel without Landlock leaves bwrap's pid 1 readable but holding
no secret, and `dsh-sandbox fs read` of a masked path is refused like every denial.

Output: unittest's verbose form, a "# SKIP: case: reason" line per skip, then "N passed, N failed, N skipped".
"""
import json
import os
import shutil
import socket
import subprocess
import sys
import unittest
import uuid

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "livability"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "remote"))
import livability  # noqa: E402
import sshd_fixture  # noqa: E402

BIN = livability.BIN
NO_LANDLOCK = os.environ.get("NO_LANDLOCK_EXEC_BIN", "")
MODES = ("read-only", "workspace-write")
PATIENCE = 120

# What the command prints: its environment, and every environ in /proc it can read, one NUL-split entry a line.
SHOW_ALL = ("env; tr '\\0' '\\n' </proc/self/environ; "
            "for p in /proc/[0-9]*; do tr '\\0' '\\n' <\"$p/environ\" 2>/dev/null; done; echo DONE")


def backends():
    found = []
    if livability.landlock_abi() >= 1:
        found.append("landlock")
    if livability.bwrap_works():
        found.append("bwrap")
    return found


class Environment(unittest.TestCase):
    def setUp(self):
        self.workspace = os.path.join(livability.SCRATCH, f"reach-environment-{uuid.uuid4().hex[:12]}")
        os.makedirs(self.workspace)
        self.marker = uuid.uuid4().hex
        self.secrets = {
            "AWS_SECRET_ACCESS_KEY": f"aws-{self.marker}",
            "GITHUB_TOKEN": f"gh-{self.marker}",
            "OPENAI_API_KEY": f"openai-{self.marker}",
            "my_service_api_key": f"lower-{self.marker}",
        }
        self.environment = dict(os.environ, DSH_PLAIN_VARIABLE=f"plain-{self.marker}", **self.secrets)
        self.environment.pop("SSH_AUTH_SOCK", None)
        self.environment["XDG_CONFIG_HOME"] = os.path.join(self.workspace, "xdg-config")  # no user config

    def tearDown(self):
        shutil.rmtree(self.workspace, ignore_errors=True)

    def tool(self, *arguments, env=None):
        argv = [BIN, *arguments]
        return subprocess.run(argv, cwd=self.workspace, env=env or self.environment, capture_output=True,
                              text=True, timeout=PATIENCE, check=False)

    def run_confined(self, backend, mode, command, *options, env=None):
        return self.tool("run", "--backend", backend, "--mode", mode, "--root", self.workspace, *options, "--",
                         "sh", "-c", command, env=env)

    def assert_no_secret(self, output, context):
        for name, value in self.secrets.items():
            self.assertNotIn(value, output, f"{context}: {name} reached the command")

    def assert_shown(self, result, context):
        self.assertEqual(result.returncode, 0, f"{context}: {result.stderr}")
        self.assertIn("DONE", result.stdout, context)
        self.assertIn(f"DSH_PLAIN_VARIABLE=plain-{self.marker}", result.stdout, context)
        self.assert_no_secret(result.stdout + result.stderr, context)

    def each_backend(self):
        found = backends()
        if not found:
            self.skipTest("this host has neither Landlock nor a working bwrap")
        return found

    # ---------------------------------------------------------------- spawned by the library --

    def test_run_shows_no_secret_anywhere(self):
        for backend in self.each_backend():
            for mode in MODES:
                with self.subTest(backend=backend, mode=mode):
                    result = self.run_confined(backend, mode, SHOW_ALL)
                    self.assert_shown(result, f"run {backend} {mode}")
                    # The call's own variables are there, set after the scrub.
                    self.assertIn("TMPDIR=", result.stdout)

    def test_bash_tool_shows_no_secret(self):
        for backend in self.each_backend():
            with self.subTest(backend=backend):
                result = self.tool("bash", "--backend", backend, "--mode", "workspace-write", "--root",
                                   self.workspace, "--json", "--", SHOW_ALL)
                self.assertEqual(result.returncode, 0, result.stderr)
                answer = json.loads(result.stdout)
                self.assertIn(f"plain-{self.marker}", json.dumps(answer))
                self.assert_no_secret(result.stdout + result.stderr, f"bash {backend}")

    def test_serve_runs_show_no_secret(self):
        """A long-lived `serve` holds the secrets for its whole life; each call's command gets none."""
        for backend in self.each_backend():
            with self.subTest(backend=backend):
                requests = [("bash.run", {"mode": "workspace-write", "root": self.workspace, "backend": backend,
                                          "command": SHOW_ALL})]
                answers = livability.serve_results(self, requests, self.environment, self.workspace, PATIENCE)
                text = json.dumps(answers)
                self.assertIn(f"plain-{self.marker}", text)
                self.assert_no_secret(text, f"serve {backend}")

    def test_an_operators_runner_is_spawned_without_the_secrets(self):
        """runnerCommand: the operator's runner confines (it gets no policy from us); it is spawned with the
        scrubbed environment, so neither it nor what it runs holds a secret."""
        path = os.path.join(self.workspace, "runner-config.json")
        runner = ["sh", "-c", "tr '\\0' '\\n' </proc/self/environ; exec \"$@\"", "runner"]
        with open(path, "w", encoding="utf-8") as config:
            json.dump({"runnerCommand": runner, "runnerFailureSignatures": ["runner failed"]}, config)
        # The runner here confines nothing, so the host's processes are in plain reach: only the command's own
        # environment and the runner's are looked at (what the operator's runner then confines is its own).
        result = self.tool("run", "--config", path, "--mode", "read-only", "--root", self.workspace, "--", "sh", "-c",
                           "env; tr '\\0' '\\n' </proc/self/environ; echo DONE")
        self.assert_shown(result, "runner-command")
        self.assertGreaterEqual(result.stdout.count(f"DSH_PLAIN_VARIABLE=plain-{self.marker}"), 3, result.stdout)

    def test_the_supervisor_and_its_helpers_are_out_of_reach(self):
        """Under Landlock the command sees host pids: the stand-in, dsh-sandbox and this test hold the secrets
        in the environment they were exec'd with, and none of them may be read from inside."""
        if livability.landlock_abi() < 1:
            self.skipTest("this kernel has no Landlock")
        ancestry = ("p=$PPID; while [ \"$p\" -gt 1 ]; do "
                    "if tr '\\0' '\\n' </proc/$p/environ >/dev/null 2>&1; then echo readable $p; "
                    "else echo unreadable; fi; p=$(awk '/^PPid:/ {print $2}' /proc/$p/status); done")
        for mode in MODES:
            with self.subTest(mode=mode):
                result = self.run_confined("landlock", mode, ancestry)
                self.assertEqual(result.returncode, 0, result.stderr)
                lines = result.stdout.split()
                # The stand-in, dsh-sandbox, this test: at least three ancestors, none readable.
                self.assertGreaterEqual(lines.count("unreadable"), 3, result.stdout)
                self.assertNotIn("readable", [line for line in lines if line != "unreadable"], result.stdout)

    def test_bwrap_pid_one_holds_no_secret_without_landlock(self):
        """Without a Landlock domain of the command's own, bwrap's pid 1 is readable from inside (the call is
        partial, and says so): it was exec'd with the scrubbed environment, so it shows none."""
        if "bwrap" not in backends():
            self.skipTest("bwrap cannot make a sandbox here")
        if not NO_LANDLOCK or not os.access(NO_LANDLOCK, os.X_OK):
            self.skipTest("NO_LANDLOCK_EXEC_BIN is not set (run through meson)")
        result = subprocess.run([NO_LANDLOCK, BIN, "run", "--backend", "bwrap", "--mode", "workspace-write",
                                 "--root", self.workspace, "--", "sh", "-c",
                                 "tr '\\0' '\\n' </proc/1/environ; echo DONE"],
                                cwd=self.workspace, env=self.environment, capture_output=True, text=True,
                                timeout=PATIENCE, check=False)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("partial", result.stderr)
        # Readable: the plain variable is there (so the case would see a secret were it there too).
        self.assertIn(f"DSH_PLAIN_VARIABLE=plain-{self.marker}", result.stdout)
        self.assert_no_secret(result.stdout, "bwrap pid 1")

    def test_confine_without_landlock_says_bwrap_pid_one_shows_the_harness_environment(self):
        """An argv the harness spawns: bwrap's pid 1 keeps the harness's environment, and without a domain of
        the command's own it is readable: the call is partial, naming it — never "full"."""
        if "bwrap" not in backends():
            self.skipTest("bwrap cannot make a sandbox here")
        if not NO_LANDLOCK or not os.access(NO_LANDLOCK, os.X_OK):
            self.skipTest("NO_LANDLOCK_EXEC_BIN is not set (run through meson)")
        result = subprocess.run([NO_LANDLOCK, BIN, "confine", "--backend", "bwrap", "--mode", "read-only", "--root",
                                 self.workspace, "--", "true"], cwd=self.workspace, env=self.environment,
                                capture_output=True, text=True, timeout=PATIENCE, check=False)
        self.assertEqual(result.returncode, 0, result.stderr)
        facts = json.loads(result.stdout)
        self.assertEqual(facts["enforcement"], "partial")
        self.assertTrue(any("/proc/1/environ" in reason for reason in facts["partialReasons"]), facts)

    # ----------------------------------------------------------- an argv the harness spawns --

    def confined_argv(self, backend, mode, command, *options):
        result = self.tool("confine", "--backend", backend, "--mode", mode, "--root", self.workspace, *options,
                           "--", "sh", "-c", command)
        self.assertEqual(result.returncode, 0, result.stderr)
        return json.loads(result.stdout)

    def test_confine_argv_scrubs_what_the_harness_gives(self):
        for backend in self.each_backend():
            for mode in MODES:
                with self.subTest(backend=backend, mode=mode):
                    confined = self.confined_argv(backend, mode, SHOW_ALL)
                    # The facts name what the confining process's own environment held.
                    self.assertTrue(set(self.secrets) <= set(confined.get("environmentRemoved", [])), confined)
                    self.assertNotIn("DSH_PLAIN_VARIABLE", confined.get("environmentRemoved", []))
                    spawned = subprocess.run(confined["argv"], cwd=self.workspace, env=self.environment,
                                             capture_output=True, text=True, timeout=PATIENCE, check=False)
                    self.assert_shown(spawned, f"confine {backend} {mode}")

    def test_confine_argv_scrubs_a_secret_only_the_harness_has(self):
        """The launcher scrubs by pattern, not by the names the confining process saw."""
        for backend in self.each_backend():
            with self.subTest(backend=backend):
                quiet = {name: value for name, value in self.environment.items() if name not in self.secrets}
                confined = self.confined_argv(backend, "read-only", SHOW_ALL)
                harness = dict(quiet, LATE_SECRET_TOKEN=f"late-{self.marker}")
                spawned = subprocess.run(confined["argv"], cwd=self.workspace, env=harness, capture_output=True,
                                         text=True, timeout=PATIENCE, check=False)
                self.assertEqual(spawned.returncode, 0, spawned.stderr)
                self.assertIn("DONE", spawned.stdout)
                self.assertNotIn(f"late-{self.marker}", spawned.stdout)

    def test_the_launchers_refuse_a_rule_the_library_would_not_give(self):
        helper = os.path.join(os.path.dirname(BIN), "dsh-sandbox-exec")
        if not os.access(helper, os.X_OK):
            self.skipTest(f"no dsh-sandbox-exec beside {BIN}")
        marker = os.path.join(self.workspace, "ran")
        for arguments, line in ((["--deny-env", "A=B"], "--deny-env: not a variable pattern: A=B"),
                                (["--allow-env", "*_TOKEN"], "--allow-env: not a variable name: *_TOKEN")):
            with self.subTest(arguments=arguments):
                result = subprocess.run([helper, *arguments, "--", "touch", marker], capture_output=True,
                                        text=True, timeout=PATIENCE, check=False)
                self.assertEqual((result.returncode, result.stderr),
                                 (125, f"dsh-sandbox-exec: usage error: {line}\n"))
                self.assertFalse(os.path.exists(marker))

    # -------------------------------------------------------------------------- the rules --

    def test_allow_env_lets_one_name_through(self):
        for backend in self.each_backend():
            with self.subTest(backend=backend):
                result = self.run_confined(backend, "read-only", "env; echo DONE", "--allow-env", "GITHUB_TOKEN")
                self.assertEqual(result.returncode, 0, result.stderr)
                self.assertIn(f"GITHUB_TOKEN=gh-{self.marker}", result.stdout)
                for name in ("AWS_SECRET_ACCESS_KEY", "OPENAI_API_KEY", "my_service_api_key"):
                    self.assertNotIn(self.secrets[name], result.stdout, name)
                # An allowed name is exact: the lowercase spelling of another stays out.
                result = self.run_confined(backend, "read-only", "env; echo DONE", "--allow-env",
                                           "MY_SERVICE_API_KEY")
                self.assertNotIn(self.secrets["my_service_api_key"], result.stdout)

    def test_ssh_auth_sock_passes_only_for_an_allowed_socket(self):
        agent_path = os.path.join(self.workspace, "agent.sock")
        agent = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        agent.bind(agent_path)
        agent.listen(1)
        # Named through a symlink: the canonical socket is what is compared.
        link = os.path.join(self.workspace, "agent-link")
        os.symlink(agent_path, link)
        environment = dict(self.environment, SSH_AUTH_SOCK=link)
        try:
            for backend in self.each_backend():
                with self.subTest(backend=backend):
                    show = "echo \"agent=${SSH_AUTH_SOCK-none}\""
                    result = self.run_confined(backend, "read-only", show, env=environment)
                    self.assertEqual((result.returncode, result.stdout), (0, "agent=none\n"), result.stderr)
                    other = os.path.join(self.workspace, f"other-{backend}.sock")
                    other_socket = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                    other_socket.bind(other)
                    result = self.run_confined(backend, "read-only", show, "--allow-unix-socket", other,
                                               env=environment)
                    other_socket.close()
                    self.assertEqual((result.returncode, result.stdout), (0, "agent=none\n"), result.stderr)
                    result = self.run_confined(backend, "read-only", show, "--allow-unix-socket", agent_path,
                                               env=environment)
                    self.assertEqual((result.returncode, result.stdout), (0, f"agent={link}\n"), result.stderr)
        finally:
            agent.close()

    def config_with(self, environment_rules):
        path = os.path.join(self.workspace, "config.json")
        with open(path, "w", encoding="utf-8") as config:
            json.dump({"environment": environment_rules}, config)
        return path

    def test_the_calls_own_variables_survive_any_pattern(self):
        config = self.config_with({"deny": ["TMP*", "*PROXY*", "DSH_PLAIN*"]})
        for backend in self.each_backend():
            for mode in MODES:
                with self.subTest(backend=backend, mode=mode):
                    result = self.run_confined(backend, mode, "env; echo DONE", "--config", config,
                                               "--allow-host", "example.invalid")
                    self.assertEqual(result.returncode, 0, result.stderr)
                    self.assertIn("TMPDIR=/tmp", result.stdout.splitlines())
                    self.assertTrue(any(line.lower().startswith(("http_proxy=", "https_proxy="))
                                        for line in result.stdout.splitlines()), result.stdout)
                    self.assertNotIn("DSH_PLAIN_VARIABLE", result.stdout)
                    # The configured patterns replace the defaults: [] or others leave GITHUB_TOKEN alone.
                    self.assertIn(f"GITHUB_TOKEN=gh-{self.marker}", result.stdout)

    def test_an_empty_deny_list_removes_nothing(self):
        config = self.config_with({"deny": []})
        for backend in self.each_backend():
            with self.subTest(backend=backend):
                result = self.run_confined(backend, "read-only", "env", "--config", config)
                self.assertEqual(result.returncode, 0, result.stderr)
                for value in self.secrets.values():
                    self.assertIn(value, result.stdout)


class FileGuard(unittest.TestCase):
    """`dsh-sandbox fs` refuses a masked path with the text of every denial (a throwaway home)."""

    def setUp(self):
        self.base = os.path.join(livability.SCRATCH, f"reach-guard-{uuid.uuid4().hex[:12]}")
        self.home = os.path.join(self.base, "home")
        self.workspace = os.path.join(self.base, "ws")
        os.makedirs(os.path.join(self.home, ".aws"))
        os.makedirs(os.path.join(self.home, ".ssh"))
        os.makedirs(self.workspace)
        self.marker = uuid.uuid4().hex
        for relative in (".aws/credentials", ".ssh/id_ed25519", ".netrc"):
            with open(os.path.join(self.home, relative), "w", encoding="utf-8") as secret:
                secret.write(f"secret-{self.marker}\n")
        with open(os.path.join(self.home, ".ssh/id_ed25519.pub"), "w", encoding="utf-8") as public:
            public.write("ssh-ed25519 AAAA public\n")
        self.environment = dict(os.environ, HOME=self.home, XDG_CONFIG_HOME=os.path.join(self.base, "xdg"))

    def tearDown(self):
        shutil.rmtree(self.base, ignore_errors=True)

    def fs(self, *arguments, mode="workspace-write"):
        return subprocess.run([BIN, "fs", *arguments, "--mode", mode, "--root", self.workspace],
                              cwd=self.workspace, env=self.environment, capture_output=True, text=True,
                              timeout=PATIENCE, check=False)

    def denial(self, path, mode="workspace-write", verb="write"):
        return f"dsh-sandbox: FS_SANDBOX_DENIED: cannot {verb} \"{path}\": file access denied under {mode} mode\n"

    def test_read_of_a_masked_path_is_refused(self):
        for mode in MODES:
            for relative in (".aws/credentials", ".ssh/id_ed25519", ".netrc", ".aws/absent", ".aws",
                             ".git-credentials"):
                with self.subTest(mode=mode, path=relative):
                    path = os.path.join(self.home, relative)
                    result = self.fs("read", path, mode=mode)
                    self.assertEqual(result.returncode, 1, result)
                    self.assertEqual(result.stderr, self.denial(path, mode))
                    self.assertNotIn(self.marker, result.stdout)

    def test_a_link_to_a_masked_path_is_refused(self):
        link = os.path.join(self.workspace, "innocent")
        os.symlink(os.path.join(self.home, ".aws/credentials"), link)
        result = self.fs("read", link)
        self.assertEqual((result.returncode, result.stderr), (1, self.denial(link)))
        self.assertNotIn(self.marker, result.stdout)

    def test_the_configured_list_is_the_guards(self):
        """The deployment's masked entries reach the guard as they reach the backends: one of its own is
        refused, and maskedPaths [] turns the defaults off for it too."""
        custom = os.path.join(self.workspace, "vault-token")
        with open(custom, "w", encoding="utf-8") as token:
            token.write(f"secret-{self.marker}\n")
        result = self.fs("read", custom)
        self.assertEqual((result.returncode, result.stdout), (0, f"secret-{self.marker}\n"), result.stderr)
        credentials = os.path.join(self.home, ".aws/credentials")
        for entries, refused, readable in (([custom], custom, credentials), ([], None, credentials)):
            with self.subTest(maskedPaths=entries):
                config = os.path.join(self.base, "config.json")
                with open(config, "w", encoding="utf-8") as handle:
                    json.dump({"maskedPaths": entries}, handle)
                if refused:
                    result = self.fs("read", "--config", config, refused)
                    self.assertEqual((result.returncode, result.stderr), (1, self.denial(refused)))
                result = self.fs("read", "--config", config, readable)
                self.assertEqual((result.returncode, result.stdout), (0, f"secret-{self.marker}\n"), result.stderr)

    def test_a_public_key_stays_readable(self):
        result = self.fs("read", os.path.join(self.home, ".ssh/id_ed25519.pub"))
        self.assertEqual((result.returncode, result.stdout), (0, "ssh-ed25519 AAAA public\n"), result.stderr)

    def test_changes_and_moves_of_masks_are_refused_in_a_writable_home(self):
        """The home as the workspace: a mask inside a writable root is still the guard's to refuse, a
        move that would carry one away under another name too, and nothing changes on disk."""
        def fs_home(*arguments):
            return subprocess.run([BIN, "fs", *arguments, "--mode", "workspace-write", "--root", self.home],
                                  cwd=self.home, env=self.environment, capture_output=True, text=True,
                                  input="overwritten", timeout=PATIENCE, check=False)
        credentials = os.path.join(self.home, ".aws/credentials")
        cases = [
            (("write", credentials), credentials),
            (("rm", credentials), credentials),
            (("mv", credentials, os.path.join(self.home, "stolen")), credentials),
            (("mv", os.path.join(self.home, ".aws"), os.path.join(self.home, "aws-renamed")),
             os.path.join(self.home, ".aws")),
            (("mv", os.path.join(self.home, ".ssh"), os.path.join(self.home, "ssh-renamed")),
             os.path.join(self.home, ".ssh")),
            (("rm", "-r", os.path.join(self.home, ".ssh")), os.path.join(self.home, ".ssh")),
        ]
        for arguments, named in cases:
            with self.subTest(arguments=arguments):
                result = fs_home(*arguments)
                self.assertEqual((result.returncode, result.stderr), (1, self.denial(named)))
        with open(credentials, encoding="utf-8") as kept:
            self.assertEqual(kept.read(), f"secret-{self.marker}\n")
        self.assertFalse(os.path.exists(os.path.join(self.home, "stolen")))
        self.assertTrue(os.path.exists(os.path.join(self.home, ".ssh/id_ed25519")))
        # A move onto a mask replaces the credential: refused too.
        planted = os.path.join(self.home, "planted")
        with open(planted, "w", encoding="utf-8") as file:
            file.write("attacker's key\n")
        result = fs_home("mv", planted, os.path.join(self.home, ".ssh/id_ed25519"))
        self.assertEqual(result.returncode, 1, result)
        with open(os.path.join(self.home, ".ssh/id_ed25519"), encoding="utf-8") as kept:
            self.assertEqual(kept.read(), f"secret-{self.marker}\n")


class RemoteEnvironment(unittest.TestCase):
    """--remote through a real sshd on 127.0.0.1 (tests/remote/sshd_fixture.py): the command runs under the
    remote helper's provider, which scrubs by its own rules — a secret in the helper's environment (what
    ssh's SendEnv/AcceptEnv or the remote login would put there) never reaches the command — and the local
    secrets do not cross (the fixture's sshd accepts LANG only, as Debian's does)."""

    server = None

    @classmethod
    def setUpClass(cls):
        try:
            cls.server = sshd_fixture.SshServer(BIN)
        except sshd_fixture.SkipTest as reason:
            raise unittest.SkipTest(str(reason))

    @classmethod
    def tearDownClass(cls):
        if cls.server:
            cls.server.close()

    def setUp(self):
        self.work = os.path.join(self.server.dir, f"env-{uuid.uuid4().hex[:8]}")
        os.makedirs(os.path.join(self.work, "workspace"))
        self.runtime_dir = os.path.join("/var/tmp", f"dshe{uuid.uuid4().hex[:6]}")
        os.makedirs(self.runtime_dir, mode=0o700)
        self.marker = uuid.uuid4().hex
        # The remote helper's own environment holds a secret of its own.
        self.program = self.server.remote_wrapper(f"dsh-with-secret-{self.marker[:8]}",
                                                  f"REMOTE_SIDE_TOKEN=remote-{self.marker} "
                                                  f"GITHUB_TOKEN=remote-gh-{self.marker}")

    def tearDown(self):
        self.server.stop_shared_connections(self.runtime_dir)
        shutil.rmtree(self.runtime_dir, ignore_errors=True)
        shutil.rmtree(self.work, ignore_errors=True)

    def remote(self, *options):
        config = os.path.join(self.work, "config.json")
        with open(config, "w", encoding="utf-8") as handle:
            json.dump({"sshCommand": ["ssh", "-F", self.server.ssh_config], "remoteProgram": self.program}, handle)
        environment = dict(os.environ, DSH_SANDBOX_CONFIG=config, XDG_RUNTIME_DIR=self.runtime_dir,
                           DSH_SANDBOX_STATE_DIR=os.path.join(self.work, "local-state"),
                           LOCAL_SIDE_TOKEN=f"local-{self.marker}", OPENAI_API_KEY=f"local-openai-{self.marker}")
        return subprocess.run([BIN, "run", "--remote", "remote-test", "--mode", "workspace-write", "--root",
                               os.path.join(self.work, "workspace"), *options, "--", "sh", "-c", SHOW_ALL],
                              env=environment, capture_output=True, text=True, timeout=PATIENCE, check=False)

    def test_a_remote_commands_environment_is_scrubbed_there(self):
        result = self.remote()
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("DONE", result.stdout)
        self.assertNotIn(self.marker, result.stdout)

    def test_an_allowed_name_is_let_through_on_the_remote(self):
        result = self.remote("--allow-env", "GITHUB_TOKEN")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn(f"GITHUB_TOKEN=remote-gh-{self.marker}", result.stdout)
        self.assertNotIn(f"remote-{self.marker}", result.stdout.replace(f"remote-gh-{self.marker}", ""))
        self.assertNotIn(f"local-{self.marker}", result.stdout)


if __name__ == "__main__":
    sys.exit(livability.run_suite(__name__))
