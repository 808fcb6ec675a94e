#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A session keeps its denials, and every front end shows them (issue 23, item 5).

Real calls through the built tool: a `bash --session ID` write outside the roots on each backend, an `fs write
/etc/...` refused by the file guard, serve's fs.write and session.denials, each checked on disk (nothing was
written) and then in `session denials ID` (text and --json) with the right path, rule, source and surface.  A
store replaced by a symlink or made corrupt is refused by `session denials`, naming the file, and left as it was.

Output: unittest's verbose form, a "# SKIP: case: reason" line per skip, then "N passed, N failed, N skipped".
"""
import json
import os
import shutil
import subprocess
import sys
import unittest
import uuid

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "livability"))
import livability  # noqa: E402

BIN = livability.BIN
PATIENCE = 120


class SessionDenials(unittest.TestCase):
    def setUp(self):
        self.base = os.path.realpath(os.path.join(livability.SCRATCH, f"reach-denials-{uuid.uuid4().hex[:12]}"))
        self.workspace = os.path.join(self.base, "ws")
        # Outside every root, in a directory the test owns: a refused write there is checked on disk.
        self.outside = os.path.join(self.base, "outside")
        os.makedirs(self.workspace)
        os.makedirs(self.outside)
        self.environment = dict(os.environ, DSH_SANDBOX_STATE_DIR=os.path.join(self.base, "state"),
                                XDG_CONFIG_HOME=os.path.join(self.base, "config"))
        self.environment.pop("DSH_SANDBOX_CONFIG", None)
        created = self.dsh("session", "new", "--cwd", self.workspace)
        self.assertEqual(created.returncode, 0, created.stderr)
        self.session = created.stdout.strip()
        switched = self.dsh("session", "mode", self.session, "workspace-write")
        self.assertEqual(switched.returncode, 0, switched.stderr)
        self.store = os.path.join(self.base, "state", f"{self.session}.denials")

    def tearDown(self):
        shutil.rmtree(self.base, ignore_errors=True)

    def dsh(self, *arguments, stdin=None):
        return subprocess.run([BIN, *arguments], cwd=self.workspace, env=self.environment, input=stdin,
                              stdin=None if stdin is not None else subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=PATIENCE, check=False)

    def kept(self):
        listed = self.dsh("session", "denials", self.session, "--json")
        self.assertEqual(listed.returncode, 0, listed.stderr)
        kept = json.loads(listed.stdout)
        self.assertEqual(kept["sessionId"], self.session)
        return kept

    def kept_for(self, path):
        return [record for record in self.kept()["denials"] if record.get("path") == path]

    def check_bash_denial(self, backend):
        target = os.path.join(self.outside, f"bash-{backend}.txt")
        ran = self.dsh("bash", "--session", self.session, "--backend", backend, "--json", f"echo x > {target}")
        self.assertFalse(os.path.exists(target), "the denied write landed")
        result = json.loads(ran.stdout)
        self.assertEqual(result["kind"], "denied", ran.stdout)
        records = self.kept_for(target)
        self.assertEqual(len(records), 1, self.kept())
        record = records[0]
        self.assertEqual((record["op"], record["rule"], record["surface"]), ("write", "outside-roots", "bash"))
        self.assertEqual(record["source"], "supervisor")
        self.assertEqual(record["grant"], {"kind": "writable-root", "target": self.outside})
        self.assertIsInstance(record["at"], int)
        # The same record the call itself returned.
        returned = [denial for denial in result["denials"] if denial.get("path") == target]
        self.assertEqual(returned, [{key: value for key, value in record.items() if key not in ("at", "surface")}])
        text = self.dsh("session", "denials", self.session)
        self.assertEqual(text.returncode, 0, text.stderr)
        lines = [line.split("\t") for line in text.stdout.splitlines() if target in line]
        self.assertEqual(len(lines), 1, text.stdout)
        self.assertEqual(lines[0][1], "bash")
        self.assertRegex(lines[0][0], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
        self.assertIn(f'write "{target}" (outside-roots)', lines[0][2])

    def test_bash_denial_kept_bwrap(self):
        if not livability.bwrap_works():
            self.skipTest("bwrap cannot make a sandbox on this host")
        self.check_bash_denial("bwrap")

    def test_bash_denial_kept_landlock(self):
        if livability.landlock_abi() < 1:
            self.skipTest("the kernel has no Landlock")
        self.check_bash_denial("landlock")

    def test_fs_denial_kept_with_file_guard_source(self):
        target = "/etc/dsh-sandbox-reach-denials-" + uuid.uuid4().hex[:8]
        written = self.dsh("fs", "write", target, "--session", self.session, "--json", stdin="x")
        self.assertEqual(written.returncode, 1, written.stderr)
        self.assertFalse(os.path.exists(target), "the denied write landed")
        error = json.loads(written.stdout)
        self.assertEqual(error["code"], "FS_SANDBOX_DENIED")
        self.assertIn(target, error["message"])
        self.assertEqual((error["denial"]["path"], error["denial"]["source"], error["denial"]["rule"]),
                         (target, "file-guard", "outside-roots"))
        records = self.kept_for(target)
        self.assertEqual(len(records), 1, self.kept())
        self.assertEqual((records[0]["surface"], records[0]["source"], records[0]["op"]), ("fs", "file-guard", "write"))
        self.assertEqual(records[0]["grant"], error["denial"]["grant"])
        # Without a session nothing is kept, and the error object is the same.
        again = self.dsh("fs", "write", target, "--mode", "workspace-write", "--root", self.workspace, "--json",
                         stdin="x")
        self.assertEqual(json.loads(again.stdout)["denial"], error["denial"])
        self.assertEqual(len(self.kept_for(target)), 1)

    def test_fs_protected_subpath_kept(self):
        os.makedirs(os.path.join(self.workspace, ".git", "hooks"))
        hook = os.path.join(self.workspace, ".git", "hooks", "pre-commit")
        written = self.dsh("fs", "write", ".git/hooks/pre-commit", "--session", self.session, stdin="#!/bin/sh\n")
        self.assertEqual(written.returncode, 1)
        self.assertFalse(os.path.exists(hook))
        records = self.kept_for(hook)
        self.assertEqual([record["rule"] for record in records], ["protected-subpath"], self.kept())

    def serve(self, requests):
        """One `serve`, each request answered in order; every message by id."""
        server = subprocess.Popen([BIN, "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True, cwd=self.workspace, env=self.environment)
        answers = {}
        try:
            for number, (method, params) in enumerate(requests, start=1):
                server.stdin.write(json.dumps({"jsonrpc": "2.0", "id": number, "method": method,
                                               "params": params}) + "\n")
                server.stdin.flush()
                answers[number] = json.loads(server.stdout.readline())
        finally:
            server.stdin.close()
            status = server.wait(timeout=PATIENCE)
            log = server.stderr.read()
            server.stdout.close()
            server.stderr.close()
        self.assertEqual((status, log), (0, ""))
        return answers

    def test_serve_fs_denial_and_session_denials(self):
        target = os.path.join(self.outside, "serve.txt")
        cli_target = os.path.join(self.outside, "cli.txt")
        self.assertEqual(self.dsh("fs", "write", cli_target, "--session", self.session, stdin="x").returncode, 1)
        answers = self.serve([
            ("fs.write", {"sessionId": self.session, "path": target, "content": "x"}),
            ("session.denials", {"sessionId": self.session}),
            ("session.denials", {"sessionId": "no-such-session"}),
        ])
        self.assertFalse(os.path.exists(target))
        error = answers[1]["error"]
        self.assertEqual(error["code"], -32000, error)
        self.assertEqual(error["data"]["code"], "FS_SANDBOX_DENIED")
        denial = error["data"]["denial"]
        self.assertEqual((denial["path"], denial["rule"], denial["source"]), (target, "outside-roots", "file-guard"))
        self.assertEqual(denial["grant"], {"kind": "writable-root", "target": self.outside})
        self.assertNotIn("warning", error["data"])
        listed = answers[2]["result"]
        self.assertEqual(listed, self.kept())
        paths = [(record["path"], record["surface"]) for record in listed["denials"]]
        # The CLI's record (another process, earlier) first, then serve's.
        self.assertEqual(paths, [(cli_target, "fs"), (target, "fs")])
        self.assertEqual(answers[3]["error"]["code"], -32000, answers[3])
        self.assertIn("no-such-session", answers[3]["error"]["message"])

    def test_symlinked_store_refused(self):
        elsewhere = os.path.join(self.base, "elsewhere")
        with open(elsewhere, "w") as out:
            out.write("not the store\n")
        os.makedirs(os.path.dirname(self.store), exist_ok=True)
        os.symlink(elsewhere, self.store)
        listed = self.dsh("session", "denials", self.session)
        self.assertEqual(listed.returncode, 1)
        self.assertIn(f"session denial store {self.store} is not a regular file", listed.stderr)
        written = self.dsh("fs", "write", os.path.join(self.outside, "x"), "--session", self.session, stdin="x")
        self.assertEqual(written.returncode, 1)
        self.assertIn("warning: the session could not keep this denial", written.stderr)
        self.assertTrue(os.path.islink(self.store))
        with open(elsewhere) as kept:
            self.assertEqual(kept.read(), "not the store\n")

    def test_corrupt_store_reported_and_left_alone(self):
        self.assertEqual(self.dsh("fs", "write", os.path.join(self.outside, "a"), "--session", self.session,
                                  stdin="x").returncode, 1)
        with open(self.store, "a") as out:
            out.write('{"op":"write"}\n')
        before = open(self.store, "rb").read()
        listed = self.dsh("session", "denials", self.session)
        self.assertEqual(listed.returncode, 1)
        self.assertIn(f"session denial store {self.store}: line 3: ", listed.stderr)
        written = self.dsh("fs", "write", os.path.join(self.outside, "b"), "--session", self.session, stdin="x")
        self.assertIn("warning: the session could not keep this denial", written.stderr)
        self.assertEqual(open(self.store, "rb").read(), before)

    def test_usage(self):
        self.assertEqual(self.dsh("session", "denials").returncode, 2)
        self.assertEqual(self.dsh("session", "denials", "../x").returncode, 2)
        missing = self.dsh("session", "denials", "no-such-session")
        self.assertEqual(missing.returncode, 1)
        self.assertIn('session "no-such-session" does not exist', missing.stderr)
        empty = self.dsh("session", "denials", self.session)
        self.assertEqual((empty.returncode, empty.stdout), (0, ""))
        self.assertEqual(self.kept(), {"sessionId": self.session, "denials": []})


if __name__ == "__main__":
    sys.exit(livability.run_suite(__name__))
