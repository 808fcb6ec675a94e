#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`dsh-sandbox why` and serve's `policy.why` (docs/denials.md): each rule, on both modes, and each
grant checked the way it will be used.

Each case asks the built `dsh-sandbox` ($DSH_SANDBOX_BIN) with a home, a workspace (a git
repository) and a directory outside every root of its own under $DSH_TEST_SCRATCH, and where the
answer is about what a command can do, runs the command confined (`dsh-sandbox run`, per backend)
and judges the disk: a path why calls denied is refused on disk; the grant why names, applied to one
call, lands the change; the same call without it is refused again.

- outside-roots (write, metadata): the nearest existing directory as an extra root, under
  workspace-write the call's mode, under read-only with workspace-write too;
- the workspace under read-only: the mode alone; under workspace-write: allowed;
- protected-subpath: only danger-full-access; own-file (the session store) and masked-path: none;
- a symlink out of the workspace is judged where it points;
- connect: network-off, local-port, host-not-allowed, metadata-address, address-not-resolved
  (IPv4 and IPv6), each grant asked again with the grant applied; unix sockets: unix-socket with an
  --allow-unix-socket grant, a socket in the workspace allowed under workspace-write only;
- /tmp on each backend; bad input is exit 2 with one line; `policy.why` answers as the CLI does.

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
from livability import BIN, SCRATCH, bwrap_works, landlock_abi, run_suite, serve_results  # noqa: E402

# A bound on a run that hangs, never a measurement.
PATIENCE = 120
BACKENDS = [name for name, usable in (("landlock", landlock_abi() > 0), ("bwrap", bwrap_works())) if usable]
MODES = ("read-only", "workspace-write")


class Why(unittest.TestCase):
    def setUp(self):
        os.makedirs(SCRATCH, exist_ok=True)
        self.home = os.path.realpath(tempfile.mkdtemp(prefix="why-", dir=SCRATCH))
        self.workspace = os.path.join(self.home, "ws")
        self.outside = os.path.join(self.home, "out")
        os.makedirs(self.workspace)
        os.makedirs(os.path.join(self.outside, "sub"))
        with open(os.path.join(self.outside, "file"), "w", encoding="utf-8") as handle:
            handle.write("kept\n")
        os.chmod(os.path.join(self.outside, "file"), 0o644)
        with open(os.path.join(self.workspace, "file"), "w", encoding="utf-8") as handle:
            handle.write("mine\n")
        os.chmod(os.path.join(self.workspace, "file"), 0o644)
        self.state = os.path.join(self.home, ".local", "state")
        self.env = dict(os.environ, HOME=self.home, XDG_CONFIG_HOME=os.path.join(self.home, ".config"),
                        XDG_STATE_HOME=self.state, XDG_CACHE_HOME=os.path.join(self.home, ".cache"),
                        DSH_SANDBOX_STATE_DIR=os.path.join(self.state, "dsh-sandbox"))
        self.env.pop("DSH_SANDBOX_CONFIG", None)
        subprocess.run(["git", "init", "-q", self.workspace], check=True, env=self.env)
        self.sockets = []

    def tearDown(self):
        for listener in self.sockets:
            listener.close()
        shutil.rmtree(self.home, ignore_errors=True)

    # ------------------------------------------------------------- helpers --

    def why(self, mode, op, target, *options, backend=None, root=None):
        argv = [BIN, "why", "--mode", mode, "--root", root or self.workspace, *options, "--op", op, target]
        if backend:
            argv[2:2] = ["--backend", backend]
        return subprocess.run(argv, capture_output=True, text=True, env=self.env, cwd=self.workspace,
                              timeout=PATIENCE, check=False)

    def denial(self, mode, op, target, *options, backend=None, root=None):
        """The record of a denied answer (exit 1, one JSON object), its text line checked too."""
        answer = self.why(mode, op, target, *options, "--json", backend=backend, root=root)
        self.assertEqual((answer.returncode, answer.stderr), (1, ""), answer.stdout)
        record = json.loads(answer.stdout)
        line = self.why(mode, op, target, *options, backend=backend, root=root)
        self.assertEqual(line.returncode, 1)
        self.assertEqual(len(line.stdout.splitlines()), 1, line.stdout)
        self.assertTrue(line.stdout.startswith(f"denied: {op} "), line.stdout)
        self.assertIn(f"({record['rule']})", line.stdout)
        self.assertEqual(record["source"], "policy")
        self.assertEqual(record["op"], op)
        return record

    def assert_allowed(self, mode, op, target, *options, backend=None, root=None):
        answer = self.why(mode, op, target, *options, "--json", backend=backend, root=root)
        self.assertEqual((answer.returncode, answer.stderr), (0, ""), answer.stdout)
        self.assertEqual(json.loads(answer.stdout), {"allowed": True, "op": op, "target": target})
        line = self.why(mode, op, target, *options, backend=backend, root=root)
        self.assertEqual((line.returncode, line.stdout), (0, f"allowed: {op} {target}\n"))

    def run_confined(self, backend, mode, script, *options, root=None):
        argv = [BIN, "run", "--backend", backend, "--mode", mode, "--root", root or self.workspace, *options,
                "--", "sh", "-c", script]
        return subprocess.run(argv, capture_output=True, text=True, env=self.env, cwd=self.workspace,
                              timeout=PATIENCE, check=False)

    def grant_options(self, grant):
        """The options that apply a grant to one call (what the narrow escalation grants)."""
        options = []
        if grant.get("mode"):
            options += ["--mode", grant["mode"]]
        if grant["kind"] == "writable-root":
            options += ["--allow-write", grant["target"]]
        return options

    def listen(self, path):
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(path)
        listener.listen(4)
        self.sockets.append(listener)

    def require_backends(self):
        if not BACKENDS:
            self.skipTest("neither Landlock nor bwrap can confine on this host")

    # --------------------------------------------------------------- files --

    def test_outside_roots_on_both_modes(self):
        self.require_backends()
        target = os.path.join(self.outside, "new", "x")
        for mode in MODES:
            with self.subTest(mode=mode):
                record = self.denial(mode, "write", target)
                self.assertEqual((record["path"], record["rule"]), (target, "outside-roots"))
                expected = {"kind": "writable-root", "target": self.outside}
                if mode == "read-only":
                    expected["mode"] = "workspace-write"
                self.assertEqual(record["grant"], expected)
                for backend in BACKENDS:
                    script = f"mkdir -p {self.outside}/new && echo x > {target}"
                    refused = self.run_confined(backend, mode, script)
                    self.assertNotEqual(refused.returncode, 0, refused.stderr)
                    self.assertFalse(os.path.exists(target), f"{backend}: {target} landed without the grant")
                    landed = self.run_confined(backend, mode, script, *self.grant_options(record["grant"]))
                    self.assertEqual(landed.returncode, 0, f"{backend}: {landed.stderr}")
                    self.assertTrue(os.path.exists(target), f"{backend}: the grant did not land {target}")
                    shutil.rmtree(os.path.join(self.outside, "new"))
                    again = self.run_confined(backend, mode, script)
                    self.assertNotEqual(again.returncode, 0)
                    self.assertFalse(os.path.exists(target), f"{backend}: the grant outlived its call")

    def test_workspace_on_both_modes(self):
        self.require_backends()
        target = os.path.join(self.workspace, "made")
        self.assert_allowed("workspace-write", "write", target)
        self.assert_allowed("workspace-write", "write", "relative/made")
        record = self.denial("read-only", "write", target)
        self.assertEqual((record["rule"], record["grant"]), ("outside-roots",
                                                             {"kind": "mode", "mode": "workspace-write"}))
        for backend in BACKENDS:
            refused = self.run_confined(backend, "read-only", f"echo x > {target}")
            self.assertNotEqual(refused.returncode, 0)
            self.assertFalse(os.path.exists(target))
            landed = self.run_confined(backend, "read-only", f"echo x > {target}", *self.grant_options(record["grant"]))
            self.assertEqual(landed.returncode, 0, landed.stderr)
            self.assertTrue(os.path.exists(target))
            os.unlink(target)

    def test_metadata_on_both_modes(self):
        self.require_backends()
        outside_file = os.path.join(self.outside, "file")
        inside_file = os.path.join(self.workspace, "file")
        for mode in MODES:
            with self.subTest(mode=mode):
                record = self.denial(mode, "metadata", outside_file)
                self.assertEqual((record["path"], record["rule"], record["grant"]["kind"], record["grant"]["target"]),
                                 (outside_file, "outside-roots", "writable-root", self.outside))
                for backend in BACKENDS:
                    self.run_confined(backend, mode, f"chmod 600 {outside_file}")
                    self.assertEqual(stat.S_IMODE(os.stat(outside_file).st_mode), 0o644, backend)
        self.assert_allowed("workspace-write", "metadata", inside_file)
        record = self.denial("read-only", "metadata", inside_file)
        self.assertEqual(record["grant"], {"kind": "mode", "mode": "workspace-write"})
        for backend in BACKENDS:
            os.chmod(inside_file, 0o644)
            done = self.run_confined(backend, "workspace-write", f"chmod 600 {inside_file}")
            self.assertEqual((done.returncode, stat.S_IMODE(os.stat(inside_file).st_mode)), (0, 0o600), done.stderr)

    def test_protected_subpath_on_both_modes(self):
        self.require_backends()
        hook = os.path.join(self.workspace, ".git", "hooks", "pre-commit")
        os.makedirs(os.path.dirname(hook), exist_ok=True)
        for mode, rule in (("workspace-write", "protected-subpath"), ("read-only", "outside-roots")):
            with self.subTest(mode=mode):
                record = self.denial(mode, "write", hook)
                self.assertEqual((record["path"], record["rule"], record["grant"]),
                                 (hook, rule, {"kind": "mode", "mode": "danger-full-access"}))
        for backend in BACKENDS:
            self.run_confined(backend, "workspace-write", f"echo evil > {hook}")
            self.assertFalse(os.path.exists(hook), f"{backend} let the hook be written")

    def test_own_file_has_no_grant(self):
        self.require_backends()
        store = os.path.join(self.state, "dsh-sandbox")
        os.makedirs(store, exist_ok=True)
        forged = os.path.join(store, "forged.jsonl")
        # The home as the workspace: the store lies inside a writable root, and stays the sandbox's own.
        record = self.denial("workspace-write", "write", forged, root=self.home)
        self.assertEqual((record["rule"], record["grant"]), ("own-file", {"kind": "none"}))
        record = self.denial("read-only", "write", forged, root=self.home)
        self.assertEqual(record["grant"], {"kind": "none"})
        # Outside every root it is outside-roots, and still no grant reaches it.
        record = self.denial("workspace-write", "write", forged)
        self.assertEqual((record["rule"], record["grant"]), ("outside-roots", {"kind": "none"}))
        for backend in BACKENDS:
            self.run_confined(backend, "workspace-write", f"echo x > {forged}", root=self.home)
            self.assertFalse(os.path.exists(forged), f"{backend} let the session store be written")

    def test_masked_path_on_both_modes(self):
        secret = os.path.join(self.workspace, "secret")
        os.makedirs(secret)
        key = os.path.join(secret, "key")
        with open(key, "w", encoding="utf-8") as handle:
            handle.write("k\n")
        for mode in MODES:
            for op in ("read", "write"):
                with self.subTest(mode=mode, op=op):
                    record = self.denial(mode, op, key, "--mask", secret)
                    self.assertEqual((record["path"], record["rule"], record["grant"]),
                                     (key, "masked-path", {"kind": "none"}))
            # Its name as given, before any walk: the same answer.
            record = self.denial(mode, "read", "secret/key", "--mask", secret)
            self.assertEqual(record["path"], key)
        self.assert_allowed("read-only", "read", key)

    def test_symlink_judged_where_it_points(self):
        os.symlink(self.outside, os.path.join(self.workspace, "out-link"))
        record = self.denial("workspace-write", "write", os.path.join(self.workspace, "out-link", "x"))
        self.assertEqual((record["path"], record["grant"]["target"]), (os.path.join(self.outside, "x"),
                                                                      self.outside))
        self.assert_allowed("workspace-write", "read", os.path.join(self.workspace, "out-link", "file"))

    def test_temp_area_per_backend(self):
        self.require_backends()
        for backend in BACKENDS:
            with self.subTest(backend=backend):
                self.assert_allowed("workspace-write", "write", "/tmp/why-test-x", backend=backend)
                record = self.denial("read-only", "write", "/tmp/why-test-x", backend=backend)
                self.assertEqual(record["grant"], {"kind": "mode", "mode": "workspace-write"})

    # ------------------------------------------------------------- network --

    def assert_grant_allows(self, mode, target, record, *options):
        """The grant's host or port, applied, lets the same connect through."""
        grant = record["grant"]
        applied = {"allowed-host": ["--allow-host", grant.get("target", "")],
                   "local-port": ["--allow-local-port", grant.get("target", "")]}[grant["kind"]]
        self.assert_allowed(mode, "connect", target, *options, *applied)

    def test_connect_rules(self):
        for mode in MODES:
            with self.subTest(mode=mode):
                self.assert_allowed(mode, "connect", "example.com:443")
                off = self.denial(mode, "connect", "example.com:443", "--network", "off")
                self.assertEqual((off["host"], off["port"], off["rule"], off["grant"]),
                                 ("example.com", 443, "network-off",
                                  {"kind": "allowed-host", "target": "example.com:443"}))
                local = self.denial(mode, "connect", "127.0.0.1:8080", "--network", "off")
                self.assertEqual((local["rule"], local["grant"]), ("local-port",
                                                                   {"kind": "local-port", "target": "8080"}))
                self.assert_grant_allows(mode, "127.0.0.1:8080", local, "--network", "off")
                listed = ["--allow-host", "*.example.org"]
                self.assert_allowed(mode, "connect", "api.example.org:443", *listed)
                other = self.denial(mode, "connect", "example.com:443", *listed)
                self.assertEqual((other["rule"], other["grant"]["target"]), ("host-not-allowed", "example.com:443"))
                self.assert_grant_allows(mode, "example.com:443", other, *listed)
                cloud = self.denial(mode, "connect", "169.254.169.254:80", *listed)
                self.assertEqual((cloud["rule"], cloud["grant"]), ("metadata-address", {"kind": "none"}))
                literal = self.denial(mode, "connect", "203.0.113.7:443", *listed)
                self.assertEqual((literal["rule"], literal["grant"]["target"]),
                                 ("address-not-resolved", "203.0.113.7:443"))
                self.assert_grant_allows(mode, "203.0.113.7:443", literal, *listed)
                six = self.denial(mode, "connect", "[2001:db8::7]:443", *listed)
                self.assertEqual((six["host"], six["grant"]["target"]), ("2001:db8::7", "[2001:db8::7]:443"))
                self.assert_grant_allows(mode, "[2001:db8::7]:443", six, *listed)

    def test_unix_sockets(self):
        outside_socket = os.path.join(self.outside, "daemon.sock")
        inside_socket = os.path.join(self.workspace, "own.sock")
        self.listen(outside_socket)
        self.listen(inside_socket)
        for mode in MODES:
            with self.subTest(mode=mode):
                record = self.denial(mode, "connect", outside_socket)
                self.assertEqual((record["path"], record["rule"], record["grant"]),
                                 (outside_socket, "unix-socket", {"kind": "unix-socket", "target": outside_socket}))
                self.assert_allowed(mode, "connect", outside_socket, "--allow-unix-socket", outside_socket)
        self.assert_allowed("workspace-write", "connect", inside_socket)
        self.assertEqual(self.denial("read-only", "connect", inside_socket)["rule"], "unix-socket")

    # ----------------------------------------------------------- bad input --

    def test_bad_input_is_exit_2_with_one_line(self):
        cases = [
            [BIN, "why", "/etc/x"],
            [BIN, "why", "--op", "dns", "example.com"],
            [BIN, "why", "--op", "write"],
            [BIN, "why", "--op", "write", "/a", "/b"],
            [BIN, "why", "--op", "write", ""],
            [BIN, "why", "--op", "connect", "example.com"],
            [BIN, "why", "--op", "connect", "a:b:c"],
            [BIN, "why", "--op", "connect", "example.com:0"],
            [BIN, "why", "--op", "write", "--mode", "sideways", "/x"],
        ]
        for argv in cases:
            with self.subTest(argv=argv[1:]):
                answer = subprocess.run(argv, capture_output=True, text=True, env=self.env, cwd=self.workspace,
                                        timeout=PATIENCE, check=False)
                self.assertEqual((answer.returncode, answer.stdout), (2, ""), answer.stderr)
                self.assertEqual(len(answer.stderr.splitlines()), 1, answer.stderr)
                self.assertTrue(answer.stderr.startswith("dsh-sandbox: "), answer.stderr)

    # --------------------------------------------------------------- serve --

    def test_serve_policy_why(self):
        target = os.path.join(self.outside, "x")
        record = self.denial("workspace-write", "write", target)
        answers = serve_results(self, [
            ("policy.why", {"op": "write", "target": target, "mode": "workspace-write", "root": self.workspace}),
            ("policy.why", {"op": "write", "target": "made", "mode": "workspace-write", "root": self.workspace}),
            ("policy.why", {"op": "connect", "target": "example.com:443", "network": "off"}),
        ], self.env, self.workspace)
        self.assertEqual(answers[1], {"allowed": False, "denial": record})
        self.assertEqual(answers[2], {"allowed": True})
        self.assertEqual(answers[3]["denial"]["rule"], "network-off")


if __name__ == "__main__":
    sys.exit(run_suite(__name__))
