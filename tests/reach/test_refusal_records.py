#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The refusal records, from the supervisor up to every front end that returns a bash result.

Each case runs the built `dsh-sandbox` ($DSH_SANDBOX_BIN) as a client would — `bash --json`,
`serve` (`bash.run`, `job.start` + `job.wait`) and `mcp` (`tools/call` bash, its structuredContent)
— on the real kernel with real bwrap, per backend, with a workspace of its own under
$DSH_TEST_SCRATCH, and judges the result object and the disk:

- a chmod beneath no writable root is refused, the file unchanged, and the result's
  `refusedWrites` holds exactly {op "chmod", path, rule "outside-roots"} after the shell's own;
- a command that refuses nothing adds no record to the shell's own, and has no
  `refusedWritesDropped`;
- a command that prints a refusal's text on stderr (and exits 1 as one would) has no record:
  the records come from the enforcing layer, not from what the command says;
- a path that is not UTF-8 still gives a result, the byte written \\xNN;
- 200 refused chmods give 64 records and `refusedWritesDropped: 136`;
- danger-full-access makes the change and has no record;
- the mcp bash tool's outputSchema requires `refusedWrites`.

The bash tool runs `bash -c`, and bash opens /dev/tty for writing as it starts (it has none: the
call has no terminal), which Landlock refuses without a record (a device node is no file changed).
Each case still measures the shell's own records with `true` on the same backend and expects them
first, so that the lists compared stay exact whatever the shell does. Which rule each refusal gets (a protected subpath, the sandbox's own file),
and that a command doing nothing has no record at all, is tests/integration/test-refusal-records.c's;
here the records' way through the front ends.

Output is unittest's verbose form on stdout, one line per case, then "N passed, N failed,
N skipped" (a "# SKIP: case: reason" line for each skip).
"""
import json
import os
import shlex
import shutil
import stat
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "livability"))
from livability import (BIN, SCRATCH, bwrap_works, landlock_abi, mcp_results, run_suite,  # noqa: E402
                        serve_results)

# A bound on a run that hangs, never a measurement.
PATIENCE = 120
BACKENDS = [name for name, usable in (("landlock", landlock_abi() > 0), ("bwrap", bwrap_works())) if usable]
BOUND_FILES = 200
RECORDS_KEPT = 64
FORGED_STDERR = ("chmod: changing permissions of '/etc/hostname': Permission denied\n"
                 "bash: /etc/passwd: Read-only file system\n")


def mode_of(path):
    return stat.S_IMODE(os.lstat(path).st_mode)


class Records(unittest.TestCase):
    def setUp(self):
        if not BACKENDS:
            self.skipTest("neither Landlock nor bwrap can confine on this host")
        os.makedirs(SCRATCH, exist_ok=True)
        self.home = tempfile.mkdtemp(prefix="refusals-", dir=SCRATCH)
        self.workspace = os.path.join(self.home, "workspace")
        self.outside = os.path.join(self.home, "outside")
        os.makedirs(self.workspace)
        os.makedirs(self.outside)
        self.target = os.path.join(self.outside, "kept")
        with open(self.target, "w", encoding="utf-8") as handle:
            handle.write("kept\n")
        os.chmod(self.target, 0o644)
        self.env = dict(os.environ, HOME=self.home, XDG_CONFIG_HOME=os.path.join(self.home, "config"),
                        XDG_STATE_HOME=os.path.join(self.home, "state"),
                        XDG_CACHE_HOME=os.path.join(self.home, "cache"),
                        DSH_SANDBOX_STATE_DIR=os.path.join(self.home, "state"))
        self.env.pop("DSH_SANDBOX_CONFIG", None)

    def tearDown(self):
        shutil.rmtree(self.home, ignore_errors=True)

    baselines = {}

    def shell_records(self, backend):
        """The records `bash -c true` has on `backend`: the shell's own, before any command's."""
        if backend not in Records.baselines:
            result = self.bash_json(backend, "true")
            workspace = [record for record in result["refusedWrites"]
                         if record["path"].startswith(self.workspace + "/")]
            self.assertEqual(workspace, [], result)
            Records.baselines[backend] = result["refusedWrites"]
        return Records.baselines[backend]

    def outside_record(self, path=None):
        return {"op": "chmod", "path": path or self.target, "rule": "outside-roots"}

    def bash_json(self, backend, command, mode="workspace-write"):
        """`dsh-sandbox bash --json` as a harness runs it; the result object."""
        done = subprocess.run([BIN, "bash", "--backend", backend, "--mode", mode, "--root", self.workspace,
                               "--json", "--", command], capture_output=True, check=False, env=self.env,
                              timeout=PATIENCE)
        self.assertEqual(done.returncode, 0, done.stderr)
        return json.loads(done.stdout)

    def serve(self, requests):
        """One `dsh-sandbox serve`, the requests answered in order; the results by id."""
        return serve_results(self, requests, self.env, self.home, PATIENCE)

    def mcp(self, backend, requests):
        """`dsh-sandbox mcp` initialized, then `requests` (id 2...); the answers by id."""
        options = ["--backend", backend, "--mode", "workspace-write", "--root", self.workspace]
        return mcp_results(self, options, requests, self.env, PATIENCE)

    def test_bash_json_records_a_chmod_outside_the_roots(self):
        for backend in BACKENDS:
            with self.subTest(backend=backend):
                result = self.bash_json(backend, f"chmod 600 '{self.target}'; true")
                self.assertEqual(result["sandbox"]["backend"], backend)
                self.assertEqual(result["refusedWrites"], self.shell_records(backend) + [self.outside_record()],
                                 result)
                self.assertNotIn("refusedWritesDropped", result)
                self.assertEqual(mode_of(self.target), 0o644)

    def test_bash_json_nothing_refused_adds_no_record(self):
        for backend in BACKENDS:
            with self.subTest(backend=backend):
                result = self.bash_json(backend, "echo made > made; cat made")
                self.assertEqual(result["stdout"]["text"], "made\n", result)
                self.assertEqual(result["refusedWrites"], self.shell_records(backend), result)
                self.assertNotIn("refusedWritesDropped", result)

    def test_a_call_that_refuses_nothing_has_an_empty_list(self):
        # bash's own open of /dev/tty as it starts, refused under Landlock, is a device node, no file
        # changed: it leaves no record (docs/bash-tool.md), so the shell's own records are none at all.
        for backend in BACKENDS:
            with self.subTest(backend=backend):
                result = self.bash_json(backend, "true")
                self.assertEqual(result["refusedWrites"], [], result)
                self.assertNotIn("refusedWritesDropped", result)

    def test_stderr_text_makes_no_record(self):
        for backend in BACKENDS:
            with self.subTest(backend=backend):
                result = self.bash_json(backend, f"printf %s {shlex.quote(FORGED_STDERR)} >&2; exit 1")
                self.assertEqual(result["stderr"]["text"], FORGED_STDERR, result)
                self.assertEqual(result["refusedWrites"], self.shell_records(backend), result)

    def test_a_path_that_is_not_utf8_keeps_the_result(self):
        name = os.path.join(os.fsencode(self.outside), b"\xff-name")
        with open(name, "wb") as handle:
            handle.write(b"kept\n")
        os.chmod(name, 0o644)
        for backend in BACKENDS:
            with self.subTest(backend=backend):
                result = self.bash_json(backend, f"chmod 600 '{self.outside}'/*-name; true")
                self.assertEqual(result["refusedWrites"], self.shell_records(backend) +
                                 [self.outside_record(os.path.join(self.outside, "\\xff-name"))], result)
                self.assertEqual(mode_of(name), 0o644)

    def test_danger_full_access_has_no_record(self):
        result = self.bash_json(BACKENDS[0], f"chmod 600 '{self.target}'", mode="danger-full-access")
        self.assertEqual(result["refusedWrites"], [], result)
        self.assertEqual(mode_of(self.target), 0o600)

    def test_serve_bash_run_and_job_wait_carry_the_records(self):
        for backend in BACKENDS:
            with self.subTest(backend=backend):
                policy = {"mode": "workspace-write", "root": self.workspace, "backend": backend,
                          "command": f"chmod 600 '{self.target}'; true"}
                answers = self.serve([("bash.run", policy), ("job.start", policy),
                                      ("job.wait", lambda answers: {"jobId": answers[2]["jobId"]})])
                expected = self.shell_records(backend) + [self.outside_record()]
                self.assertEqual(answers[1]["refusedWrites"], expected, answers[1])
                self.assertEqual(answers[3]["refusedWrites"], expected, answers[3])
                self.assertEqual(mode_of(self.target), 0o644)

    def test_serve_bounds_the_records_and_counts_the_rest(self):
        many = os.path.join(self.outside, "many")
        os.makedirs(many)
        paths = [os.path.join(many, f"f{index:03d}") for index in range(BOUND_FILES)]
        for path in paths:
            with open(path, "w", encoding="utf-8"):
                pass
            os.chmod(path, 0o644)
        for backend in BACKENDS:
            with self.subTest(backend=backend):
                answers = self.serve([("bash.run", {"mode": "workspace-write", "root": self.workspace,
                                                    "backend": backend, "command": f"chmod 600 '{many}'/f*; true"})])
                result = answers[1]
                shell = self.shell_records(backend)
                kept = RECORDS_KEPT - len(shell)
                self.assertEqual(result["refusedWrites"], shell + [self.outside_record(path) for path in paths[:kept]])
                self.assertEqual(result["refusedWritesDropped"], BOUND_FILES - kept)
                self.assertEqual({mode_of(path) for path in paths}, {0o644})

    def test_mcp_structured_content_carries_the_records(self):
        for backend in BACKENDS:
            with self.subTest(backend=backend):
                answers = self.mcp(backend, [
                    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
                    {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                     "params": {"name": "bash", "arguments": {"command": f"chmod 600 '{self.target}'; true"}}}])
                bash = next(tool for tool in answers[2]["tools"] if tool["name"] == "bash")
                self.assertIn("refusedWrites", bash["outputSchema"]["required"])
                content = answers[3]["structuredContent"]
                self.assertEqual(content["sandbox"]["backend"], backend)
                self.assertEqual(content["refusedWrites"], self.shell_records(backend) + [self.outside_record()],
                                 content)
                self.assertEqual(mode_of(self.target), 0o644)


if __name__ == "__main__":
    sys.exit(run_suite(__name__))
