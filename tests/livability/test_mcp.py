#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Where the bash tool's command starts, on every surface, and whether the file tools agree.

A new user's first steps: `fs write notes.txt` then `bash 'cat notes.txt'` in one session, from
whatever directory they typed them in; serve's `fs.write` then `bash.run`; a job; a `cwd` that names
a subdirectory, one that does not exist.  Each surface must start the command in the session's cwd
(else the workspace root), take a relative `cwd` against it, refuse a bad one before anything runs
(CLI exit 2, serve -32602 on `cwd`), and never make the cwd a grant: a relative write from a cwd the
mode does not let the command write is denied and absent on disk, per backend.

Each case is a real `dsh-sandbox` (the built one: $DSH_SANDBOX_BIN) over real directories under
$DSH_TEST_SCRATCH, every verdict checked on disk.  The MCP surface is tested with the official SDK
client in tests/mcp/mcp.test.mjs.  Output is unittest's verbose form, one line per case, then
"N passed, N failed, N skipped".
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from livability import BIN, SCRATCH, bwrap_works, landlock_abi, run_suite  # noqa: E402

# An upper bound on any one wait, so a broken program fails the case instead of hanging it.
PATIENCE = 60


BACKENDS = {"bwrap": bwrap_works(), "landlock": landlock_abi() > 0}


class Scratch(unittest.TestCase):
    """A workspace (with sub/), a directory outside it, and state, config and cache of their own."""

    def setUp(self):
        os.makedirs(SCRATCH, exist_ok=True)
        self.home = os.path.realpath(tempfile.mkdtemp(prefix="livability-cwd-", dir=SCRATCH))
        self.workspace = os.path.join(self.home, "workspace")
        self.sub = os.path.join(self.workspace, "sub")
        self.outside = os.path.join(self.home, "outside")
        self.elsewhere = os.path.join(self.home, "elsewhere")  # where the user typed the command
        for directory in (self.sub, self.outside, self.elsewhere):
            os.makedirs(directory)
        self.env = dict(os.environ)
        self.env.pop("DSH_SANDBOX_CONFIG", None)
        self.env.update({"DSH_SANDBOX_STATE_DIR": os.path.join(self.home, "state"),
                         "XDG_CONFIG_HOME": os.path.join(self.home, "config"),
                         "XDG_CACHE_HOME": os.path.join(self.home, "cache")})

    def tearDown(self):
        shutil.rmtree(self.home, ignore_errors=True)

    def dsh(self, *arguments, stdin=None, cwd=None):
        return subprocess.run([BIN, *arguments], input=stdin, capture_output=True, text=True, check=False,
                              cwd=cwd or self.elsewhere, env=self.env, timeout=PATIENCE)

    def session(self, cwd):
        made = self.dsh("session", "new", "--cwd", cwd)
        self.assertEqual(made.returncode, 0, made.stderr)
        return made.stdout.strip()

    def bash_pwd(self, *arguments):
        ran = self.dsh("bash", *arguments, "--", "pwd -P")
        self.assertEqual((ran.returncode, ran.stderr), (0, ""), arguments)
        return ran.stdout.strip()


class CliBash(Scratch):
    def test_starts_in_the_root_not_the_callers_cwd(self):
        self.assertEqual(self.bash_pwd("--root", self.workspace), self.workspace)
        self.assertEqual(self.bash_pwd("--root", "../workspace"), self.workspace)

    def test_starts_in_the_sessions_cwd(self):
        session = self.session(self.sub)
        self.assertEqual(self.bash_pwd("--session", session), self.sub)

    def test_cwd_relative_to_the_default_and_absolute(self):
        session = self.session(self.workspace)
        self.assertEqual(self.bash_pwd("--session", session, "--cwd", "sub"), self.sub)
        self.assertEqual(self.bash_pwd("--root", self.workspace, "--cwd", "sub/.."), self.workspace)
        self.assertEqual(self.bash_pwd("--root", self.workspace, "--cwd", self.outside), self.outside)
        os.symlink(self.sub, os.path.join(self.workspace, "link"))
        self.assertEqual(self.bash_pwd("--root", self.workspace, "--cwd", "link"), self.sub)

    def test_bad_cwd_is_a_usage_error_and_nothing_runs(self):
        marker = os.path.join(self.workspace, "ran")
        with open(os.path.join(self.workspace, "file"), "w", encoding="utf-8") as handle:
            handle.write("x")
        cases = [("missing", f'cwd "{self.workspace}/missing" does not exist'),
                 ("file", f'cwd "{self.workspace}/file" is not a directory'),
                 ("", "--cwd requires a non-empty value"),
                 ("/proc/self/cwd", 'cwd "/proc/self/cwd" passes through a /proc magic link')]
        for cwd, words in cases:
            with self.subTest(cwd=cwd):
                ran = self.dsh("bash", "--root", self.workspace, "--mode", "workspace-write", "--cwd", cwd, "--",
                               f"touch '{marker}'")
                self.assertEqual(ran.returncode, 2, ran.stderr)
                self.assertEqual(len(ran.stderr.splitlines()), 1, ran.stderr)
                self.assertIn(words, ran.stderr)
                self.assertFalse(os.path.exists(marker))

    def test_run_keeps_the_callers_cwd(self):
        ran = self.dsh("run", "--root", self.workspace, "--", "pwd", "-P")
        self.assertEqual((ran.returncode, ran.stdout.strip()), (0, self.elsewhere), ran.stderr)

    def test_run_in_a_host_tmp_cwd_starts_there_read_only(self):
        """A caller's cwd under the host's /tmp, which the session's /tmp covers, is shown back read-only."""
        if not BACKENDS["bwrap"]:
            self.skipTest("bwrap cannot make a sandbox on this host")
        here = tempfile.mkdtemp(dir="/tmp", prefix="dsh-cwd-")
        self.addCleanup(shutil.rmtree, here, ignore_errors=True)
        ran = self.dsh("run", "--backend", "bwrap", "--mode", "workspace-write", "--root", self.workspace, "--",
                       "sh", "-c", "pwd; echo ran > relative.txt || echo refused", cwd=here)
        self.assertEqual((ran.returncode, ran.stdout.splitlines()), (0, [here, "refused"]), ran.stderr)
        self.assertEqual(os.listdir(here), [])

    def test_run_in_a_cwd_planted_as_a_symlink_is_refused(self):
        """An earlier call's symlink at the cwd's name in the session's /tmp aims no bind: 125, nothing run."""
        if not BACKENDS["bwrap"]:
            self.skipTest("bwrap cannot make a sandbox on this host")
        here = tempfile.mkdtemp(dir="/tmp", prefix="dsh-cwd-")
        self.addCleanup(shutil.rmtree, here, ignore_errors=True)
        planted = self.dsh("run", "--backend", "bwrap", "--mode", "workspace-write", "--root", self.workspace, "--",
                           "ln", "-s", self.workspace, here)
        self.assertEqual(planted.returncode, 0, planted.stderr)
        ran = self.dsh("run", "--backend", "bwrap", "--mode", "workspace-write", "--root", self.workspace, "--",
                       "sh", "-c", "pwd; echo ran > planted.txt", cwd=here)
        self.assertEqual(ran.returncode, 125, ran.stdout + ran.stderr)
        self.assertEqual(ran.stdout, "")
        self.assertIn(here, ran.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.workspace, "planted.txt")))

    def test_cwd_is_no_grant(self):
        """Per backend: a relative write from a cwd the mode does not let it write is denied, absent on disk."""
        os.symlink(self.outside, os.path.join(self.workspace, "to-outside"))
        for backend, works in BACKENDS.items():
            if not works:
                continue
            for mode, cwd, lands in (("read-only", "sub", self.sub),
                                     ("workspace-write", self.outside, self.outside),
                                     ("workspace-write", "to-outside", self.outside)):
                with self.subTest(backend=backend, mode=mode, cwd=cwd):
                    ran = self.dsh("bash", "--backend", backend, "--mode", mode, "--root", self.workspace,
                                   "--cwd", cwd, "--json", "--", "echo escaped > relative.txt")
                    result = json.loads(ran.stdout)
                    self.assertEqual(result["kind"], "denied", ran.stdout)
                    self.assertFalse(os.path.exists(os.path.join(lands, "relative.txt")))
            with self.subTest(backend=backend, mode="workspace-write", cwd="sub"):
                ran = self.dsh("bash", "--backend", backend, "--mode", "workspace-write", "--root", self.workspace,
                               "--cwd", "sub", "--", "echo inside > relative.txt")
                self.assertEqual(ran.returncode, 0, ran.stderr)
                with open(os.path.join(self.sub, "relative.txt"), encoding="utf-8") as handle:
                    self.assertEqual(handle.read(), "inside\n")
                os.unlink(os.path.join(self.sub, "relative.txt"))

    def test_bwrap_cwd_under_the_hosts_tmp_starts_there_read_only(self):
        """Never another directory: bwrap alone would fall back to $HOME for a cwd its /tmp hides."""
        if not BACKENDS["bwrap"]:
            self.skipTest("bwrap cannot make a sandbox on this host")
        hidden = tempfile.mkdtemp(prefix="dsh-cwd-", dir="/tmp")
        self.addCleanup(shutil.rmtree, hidden, ignore_errors=True)
        ran = self.dsh("bash", "--backend", "bwrap", "--mode", "workspace-write", "--root", self.workspace,
                       "--cwd", hidden, "--json", "--", "pwd; touch ran")
        result = json.loads(ran.stdout)
        self.assertEqual(result["stdout"]["text"], hidden + "\n", ran.stdout)
        self.assertEqual(result["kind"], "denied", ran.stdout)
        self.assertEqual(os.listdir(hidden), [])
        self.assertFalse(os.path.exists(os.path.join(self.home, "ran")))

    def test_fs_write_then_bash_cat_agree_in_one_session(self):
        session = self.session(self.workspace)
        self.dsh("session", "mode", session, "workspace-write")
        wrote = self.dsh("fs", "write", "--session", session, "rel.txt", stdin="same file\n")
        self.assertEqual(wrote.returncode, 0, wrote.stderr)
        with open(os.path.join(self.workspace, "rel.txt"), encoding="utf-8") as handle:
            self.assertEqual(handle.read(), "same file\n")
        self.assertFalse(os.path.exists(os.path.join(self.elsewhere, "rel.txt")))
        read = self.dsh("bash", "--session", session, "--", "cat rel.txt")
        self.assertEqual((read.returncode, read.stdout), (0, "same file\n"), read.stderr)
        # And the other way round: what bash writes relative, fs reads relative.
        self.dsh("bash", "--session", session, "--", "echo from bash > back.txt")
        back = self.dsh("fs", "read", "--session", session, "back.txt")
        self.assertEqual((back.returncode, back.stdout), (0, "from bash\n"), back.stderr)


class Serve:
    """One `dsh-sandbox serve`, answered in order (no approval requests are made here)."""

    def __init__(self, case):
        self.process = subprocess.Popen([BIN, "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True, cwd=case.elsewhere, env=case.env)
        self.next_id = 0

    def answer(self, method, params):
        self.next_id += 1
        self.process.stdin.write(json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method,
                                             "params": params}) + "\n")
        self.process.stdin.flush()
        message = json.loads(self.process.stdout.readline())
        assert message["id"] == self.next_id, message
        return message

    def call(self, method, params):
        message = self.answer(method, params)
        assert "result" in message, message
        return message["result"]

    def close(self):
        self.process.stdin.close()
        status = self.process.wait(timeout=PATIENCE)
        log = self.process.stderr.read()
        self.process.stdout.close()
        self.process.stderr.close()
        return status, log


class ServeBash(Scratch):
    def setUp(self):
        super().setUp()
        self.server = Serve(self)

    def tearDown(self):
        try:
            self.assertEqual(self.server.close(), (0, ""))
        finally:
            super().tearDown()

    def bash_pwd(self, method, params):
        if method == "bash.run":
            result = self.server.call("bash.run", dict(params, command="pwd -P"))
        else:
            job = self.server.call("job.start", dict(params, command="pwd -P"))["jobId"]
            result = self.server.call("job.wait", {"jobId": job})
        self.assertEqual(result["kind"], "completed", result)
        return result["stdout"]["text"].strip()

    def test_bash_run_and_job_start_with_and_without_cwd(self):
        session = self.server.call("session.create", {"cwd": self.sub})["sessionId"]
        for method in ("bash.run", "job.start"):
            with self.subTest(method=method):
                self.assertEqual(self.bash_pwd(method, {"root": self.workspace}), self.workspace)
                self.assertEqual(self.bash_pwd(method, {"sessionId": session}), self.sub)
                self.assertEqual(self.bash_pwd(method, {"root": self.workspace, "cwd": "sub"}), self.sub)
                self.assertEqual(self.bash_pwd(method, {"sessionId": session, "cwd": ".."}), self.workspace)
                self.assertEqual(self.bash_pwd(method, {"root": self.workspace, "cwd": self.outside}), self.outside)

    def test_bad_cwd_is_invalid_params_and_nothing_starts(self):
        marker = os.path.join(self.workspace, "ran")
        for method in ("bash.run", "job.start"):
            for cwd in ("missing", "/proc/self/cwd", ""):
                with self.subTest(method=method, cwd=cwd):
                    message = self.server.answer(method, {"root": self.workspace, "mode": "workspace-write",
                                                          "cwd": cwd, "command": f"touch '{marker}'"})
                    self.assertEqual(message["error"]["code"], -32602, message)
                    self.assertEqual(message["error"]["data"], {"parameter": "cwd"})
                    self.assertIn("cwd", message["error"]["message"])
                    self.assertFalse(os.path.exists(marker))
        # No job was left behind: job ids start over at the next one, and nothing is held.
        job = self.server.call("job.start", {"root": self.workspace, "command": "true"})["jobId"]
        self.assertEqual(self.server.call("job.wait", {"jobId": job})["kind"], "completed")

    def test_fs_write_then_bash_run_cat_agree_in_one_session(self):
        session = self.server.call("session.create", {"cwd": self.workspace})["sessionId"]
        self.server.call("session.setMode", {"sessionId": session, "mode": "workspace-write"})
        wrote = self.server.call("fs.write", {"sessionId": session, "path": "rel.txt", "content": "same\n"})
        self.assertEqual(wrote["path"], os.path.join(self.workspace, "rel.txt"))
        read = self.server.call("bash.run", {"sessionId": session, "command": "cat rel.txt"})
        self.assertEqual((read["kind"], read["stdout"]["text"]), ("completed", "same\n"), read)
        self.assertFalse(os.path.exists(os.path.join(self.elsewhere, "rel.txt")))


if __name__ == "__main__":
    sys.exit(run_suite(__name__))
