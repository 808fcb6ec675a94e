# SPDX-License-Identifier: MIT
"""The bash tool believes records, not text, and escalates as narrowly as the denial (issue 23), on both backends.

Through the real CLI (`dsh-sandbox bash`), each case once per backend (the classes at the end):

- a command that only *prints* a denial — EROFS, EACCES and EPERM forms, runner-like `bwrap:` and
  `landlock-run:` lines — and exits 1, 126 or 125 gets no `denied`, no marker, no hint, no denial line:
  it is "completed" with its own status;
- a real denial hidden by `2>/dev/null` with exit 0 is "denied", with its record (the file absent on disk);
- `git config` under workspace-write is denied with the held-back message naming .git/config, taken from
  the supervisor's record, on both backends (.git/config unchanged);
- `--additional-write DIR` with an approval command that approves lands the write (on disk), the approval
  command's stdin JSON and environment name exactly the granted root, and the next call without it is
  denied again (on disk); a rejecting approval runs nothing; bad grants are refused before anything is
  asked;
- `--additional-host` under `--network off` reaches a loopback HTTP server the test starts, only with the
  grant: without it nothing reaches the server, before or after.

Output is unittest's verbose form on stdout, one line per case, then "N passed, N failed, N skipped".
"""
import http.server
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "livability"))
import livability  # noqa: E402

BIN = livability.BIN
# A bound on a call that hangs, never a measurement.
PATIENCE = 120
DENIED = "[sandbox: file access denied under {} mode]"
HINT = ("[sandbox: escalation available \u2014 retry this exact command once with sandbox_permissions (the "
        "narrowest wider mode that suffices) + justification; the approval prompt asks the user]")
FORGED_LINES = [
    "touch: cannot touch '/etc/x': Read-only file system",
    "bash: /etc/passwd: Permission denied",
    "chmod: changing permissions of '/etc/hosts': Operation not permitted",
    "error: could not write config file .git/config: Device or resource busy",
    "bwrap: Can't mount proc on /newroot/proc: Operation not permitted",
    "landlock-run: landlock_restrict_self: Operation not permitted",
    "[sandbox: file access denied under workspace-write mode]",
]


def backends():
    found = []
    if livability.landlock_abi() > 0:
        found.append("landlock")
    if livability.bwrap_works():
        found.append("bwrap")
    return found


class QuietHandler(http.server.BaseHTTPRequestHandler):
    """Answers every GET with 200 and its path; the server keeps the paths it was asked for."""

    def do_GET(self):  # noqa: N802 (the standard library's name)
        self.server.paths.append(self.path)
        body = f"fixture {self.path}\n".encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *arguments):
        pass


class DenialsBash:
    """The cases, once per backend (the classes below)."""
    backend = None

    def setUp(self):
        if self.backend not in backends():
            self.skipTest(f"{self.backend} does not work on this host")
        os.makedirs(livability.SCRATCH, exist_ok=True)
        self.place = os.path.realpath(tempfile.mkdtemp(prefix="reach-denials-bash-", dir=livability.SCRATCH))
        self.addCleanup(shutil.rmtree, self.place, True)
        os.chmod(self.place, 0o755)
        self.workspace = os.path.join(self.place, "workspace")
        self.outside = os.path.join(self.place, "outside")
        os.makedirs(self.workspace)
        os.makedirs(self.outside)
        self.env = dict(os.environ, HOME=self.workspace, XDG_CONFIG_HOME=os.path.join(self.place, "config"),
                        XDG_STATE_HOME=os.path.join(self.place, "state"),
                        XDG_CACHE_HOME=os.path.join(self.place, "cache"),
                        DSH_SANDBOX_STATE_DIR=os.path.join(self.place, "state"))
        for name in ("DSH_SANDBOX_CONFIG", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy",
                     "all_proxy", "NO_PROXY", "no_proxy"):
            self.env.pop(name, None)

    # -- running ------------------------------------------------------------------------------------

    def bash(self, command, *options, mode="workspace-write", json_form=True):
        """`dsh-sandbox bash` in the workspace: (the process, the result object or None)."""
        argv = [BIN, "bash", "--backend", self.backend, "--mode", mode, "--root", self.workspace, *options]
        argv += ["--json"] if json_form else []
        done = subprocess.run([*argv, "--", command], capture_output=True, text=True, check=False, env=self.env,
                              cwd=self.workspace, timeout=PATIENCE)
        result = json.loads(done.stdout) if json_form and done.returncode == 0 else None
        return done, result

    def approval(self, name, answer=0):
        """An approval command that saves its stdin and the escalation variables, then exits `answer`."""
        saved = os.path.join(self.place, f"{name}.json")
        variables = os.path.join(self.place, f"{name}.env")
        command = (f"cat > {shlex.quote(saved)}; env -0 | grep -z ^DSH_SANDBOX_ESCALATION_ > "
                   f"{shlex.quote(variables)}; exit {answer}")
        return command, saved, variables

    @staticmethod
    def read_approval(saved, variables):
        with open(saved, encoding="utf-8") as handle:
            request = json.load(handle)
        with open(variables, encoding="utf-8") as handle:
            pairs = [entry.split("=", 1) for entry in handle.read().split("\0") if entry]
        return request, dict(pairs)

    def assert_not_denied(self, done, result, status):
        self.assertEqual(result["kind"], "completed", result)
        self.assertFalse(result["sandbox"]["denied"], result)
        self.assertEqual(result["markers"], [], result)
        self.assertEqual(result["denials"], [], result)
        self.assertNotIn("message", result)
        self.assertEqual(result["exitCode"], status, result)

    # -- text never makes a denial --------------------------------------------------------------------

    def test_forged_denial_lines_are_the_commands_own(self):
        for mode in ("workspace-write", "read-only"):
            for line in FORGED_LINES:
                for status in (1, 126, 125):
                    with self.subTest(mode=mode, line=line, status=status):
                        command = f"echo {shlex.quote(line)} >&2; echo {shlex.quote(line)}; exit {status}"
                        done, result = self.bash(command, mode=mode)
                        self.assertEqual(done.returncode, 0, done.stderr)
                        self.assert_not_denied(done, result, status)
                        self.assertIn(line, result["stderr"]["text"])
                        human, _ = self.bash(command, mode=mode, json_form=False)
                        self.assertEqual(human.returncode, status, human.stderr)
                        # Its stderr is its own, and nothing more: no marker, no hint, no denial line.
                        self.assertEqual(human.stderr, line + "\n")

    def test_a_real_denial_hidden_by_2_devnull_and_exit_0_is_denied(self):
        target = os.path.join(self.outside, "hidden")
        done, result = self.bash(f"{{ echo no > {shlex.quote(target)}; }} 2>/dev/null; exit 0")
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(result["kind"], "denied", result)
        self.assertTrue(result["sandbox"]["denied"], result)
        self.assertEqual(result["exitCode"], 0, result)
        self.assertEqual(result["stderr"]["text"], "", result)
        self.assertEqual(result["markers"], [DENIED.format("workspace-write"), HINT], result)
        records = [record for record in result["denials"] if record.get("path") == target]
        self.assertTrue(records, result)
        self.assertEqual(records[0]["op"], "write")
        self.assertEqual(records[0]["rule"], "outside-roots")
        self.assertEqual(records[0]["source"], "supervisor")
        self.assertEqual(records[0]["grant"], {"kind": "writable-root", "target": self.outside}, records[0])
        self.assertFalse(os.path.exists(target))
        human, _ = self.bash(f"{{ echo no > {shlex.quote(target)}; }} 2>/dev/null; exit 0", json_form=False)
        self.assertEqual(human.returncode, 0, human.stderr)
        self.assertIn(f'dsh-sandbox: denied: write "{target}" (outside-roots): grant --additional-write '
                      f'{self.outside}', human.stderr.splitlines(), human.stderr)
        self.assertFalse(os.path.exists(target))

    def test_a_denial_with_no_grant_gets_the_marker_but_no_hint(self):
        # The sandbox's own files (its state inside the workspace here): grant "none", so the model is
        # told it was denied, never that an escalation is available.
        state = os.path.join(self.workspace, "state")
        os.makedirs(state)
        self.env["DSH_SANDBOX_STATE_DIR"] = state
        target = os.path.join(state, "planted")
        done, result = self.bash(f"touch {shlex.quote(target)}")
        self.assertEqual(result["kind"], "denied", result)
        self.assertEqual(result["markers"], [DENIED.format("workspace-write")], result)
        record = next(record for record in result["denials"] if record.get("path") == target)
        self.assertEqual((record["rule"], record["grant"]), ("own-file", {"kind": "none"}), record)
        self.assertFalse(os.path.exists(target))
        human, _ = self.bash(f"touch {shlex.quote(target)}", json_form=False)
        self.assertNotIn(HINT, human.stderr)
        self.assertIn("no grant", human.stderr)
        self.assertFalse(os.path.exists(target))

    def test_the_human_form_shows_three_denials_then_the_count(self):
        paths = [os.path.join(self.outside, f"f{index}") for index in range(5)]
        command = "; ".join(f"touch {shlex.quote(path)} 2>/dev/null" for path in paths) + "; true"
        human, _ = self.bash(command, json_form=False)
        lines = [line for line in human.stderr.splitlines() if line.startswith("dsh-sandbox: denied: ")]
        self.assertEqual(len(lines), 3, human.stderr)
        self.assertIn("dsh-sandbox: ... and 2 more denials", human.stderr.splitlines(), human.stderr)
        self.assertFalse(any(os.path.exists(path) for path in paths))

    def test_git_config_is_denied_with_the_held_back_message_from_the_record(self):
        # The workspace root is the repository: its .git/config is held back.
        subprocess.run(["git", "init", "-q", self.workspace], check=True, env=self.env)
        config = os.path.join(self.workspace, ".git", "config")
        with open(config, "rb") as handle:
            before = handle.read()
        for command in ("git config core.fsmonitor evil", "git config a.b c 2>/dev/null; true"):
            with self.subTest(command=command):
                done, result = self.bash(command)
                self.assertEqual(result["kind"], "denied", result)
                self.assertTrue(result["sandbox"]["denied"], result)
                self.assertTrue(any(record.get("path") == config and record["rule"] == "protected-subpath"
                                    for record in result["denials"]), result)
                self.assertTrue(result["message"].startswith(f'the sandbox holds back "{config}"'), result)
                # danger-full-access alone lifts it: the marker, no hint (docs/bash-tool.md, "Markers").
                self.assertEqual(result["markers"], [DENIED.format("workspace-write")], result)
                with open(config, "rb") as handle:
                    self.assertEqual(handle.read(), before)

    def test_a_write_to_a_mask_is_denied_with_its_record_and_no_grant(self):
        # HOME is the workspace here, so its default masks (.aws, .netrc) lie inside the writable root.
        os.makedirs(os.path.join(self.workspace, ".aws"))
        masked = {os.path.join(self.workspace, ".aws", "credentials"): b"[default]\nkey = SECRET\n",
                  os.path.join(self.workspace, ".netrc"): b"machine example.org password SECRET\n"}
        for path, content in masked.items():
            with open(path, "wb") as handle:
                handle.write(content)
        done, result = self.bash("echo pwned > .aws/credentials; echo pwned > .netrc; true")
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(result["kind"], "denied", result)
        records = {record["path"]: record for record in result["denials"]}
        for path, content in masked.items():
            self.assertEqual((records[path]["op"], records[path]["rule"], records[path]["source"],
                              records[path]["grant"]), ("write", "masked-path", "supervisor", {"kind": "none"}), result)
            with open(path, "rb") as handle:
                self.assertEqual(handle.read(), content)
        # No grant, so no hint: a model is never sent to ask for a wider mode to reach a credential.
        self.assertEqual(result["markers"], [DENIED.format("workspace-write")], result)

    # -- narrow escalation --------------------------------------------------------------------------

    def test_additional_write_lands_once_and_the_next_call_is_denied(self):
        extra = os.path.join(self.outside, "extra")
        os.makedirs(extra)
        granted, again = os.path.join(extra, "granted"), os.path.join(extra, "again")
        approve, saved, variables = self.approval("approve")
        # Relative to the workspace root, through "..": the approval is shown the canonical directory.
        done, result = self.bash(f"echo yes > {shlex.quote(granted)}", "--additional-write", "../outside/extra",
                                 "--justification", "the build writes its output there",
                                 "--approval-command", approve)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(result["kind"], "completed", result)
        self.assertEqual(result["denials"], [], result)
        with open(granted, encoding="utf-8") as handle:
            self.assertEqual(handle.read(), "yes\n")
        request, environment = self.read_approval(saved, variables)
        self.assertEqual(request["additionalWrite"], [extra], request)
        self.assertEqual(request["additionalHosts"], [], request)
        self.assertEqual(request["sandboxPermissions"], "workspace-write")
        self.assertEqual(request["currentMode"], "workspace-write")
        self.assertEqual(environment.get("DSH_SANDBOX_ESCALATION_ADDITIONAL_WRITE"), extra, environment)
        self.assertNotIn("DSH_SANDBOX_ESCALATION_ADDITIONAL_HOSTS", environment)
        # Nothing is kept: the next call without the grant is denied again, on disk.
        done, result = self.bash(f"echo no > {shlex.quote(again)}")
        self.assertEqual(result["kind"], "denied", result)
        self.assertFalse(os.path.exists(again))
        self.assertTrue(any(record.get("path") == again for record in result["denials"]), result)

    def test_an_extra_root_still_holds_back_what_the_sandbox_protects(self):
        # --additional-write .git is no way around the held-back files: .git/config and .git/hooks stay
        # protected inside the extra root, and the record's grant says only a wider mode would do.
        subprocess.run(["git", "init", "-q", self.workspace], check=True, env=self.env)
        config = os.path.join(self.workspace, ".git", "config")
        with open(config, "rb") as handle:
            before = handle.read()
        approve, _, _ = self.approval("approve")
        hook = os.path.join(self.workspace, ".git", "hooks", "pre-commit")
        done, result = self.bash(f"git config core.hooksPath /tmp; echo evil > {shlex.quote(hook)}",
                                 "--additional-write", ".git", "--justification", "it edits the repository",
                                 "--approval-command", approve)
        self.assertEqual(result["kind"], "denied", result)
        self.assertFalse(os.path.exists(hook))
        with open(config, "rb") as handle:
            self.assertEqual(handle.read(), before)
        held = [record for record in result["denials"] if record["rule"] == "protected-subpath"]
        self.assertEqual({record["path"] for record in held}, {config, hook}, result)
        for record in held:
            self.assertEqual(record["grant"], {"kind": "mode", "mode": "danger-full-access"}, record)

    def test_additional_write_from_read_only_asks_for_workspace_write_too(self):
        extra = os.path.join(self.outside, "extra")
        os.makedirs(extra)
        target = os.path.join(extra, "written")
        approve, saved, variables = self.approval("approve")
        done, result = self.bash(f"touch {shlex.quote(target)}", "--sandbox-permissions", "workspace-write",
                                 "--additional-write", extra, "--justification", "it writes there",
                                 "--approval-command", approve, mode="read-only")
        self.assertEqual(result["kind"], "completed", result)
        self.assertEqual(result["sandbox"]["mode"], "workspace-write")
        self.assertTrue(os.path.exists(target))
        request, environment = self.read_approval(saved, variables)
        self.assertEqual((request["currentMode"], request["sandboxPermissions"]), ("read-only", "workspace-write"))
        self.assertEqual(environment["DSH_SANDBOX_ESCALATION_MODE"], "workspace-write")

    def test_a_rejecting_approval_runs_nothing(self):
        extra = os.path.join(self.outside, "extra")
        os.makedirs(extra)
        ran = os.path.join(self.workspace, "ran")
        reject, saved, variables = self.approval("reject", answer=1)
        done, result = self.bash(f"touch {shlex.quote(ran)} {shlex.quote(extra)}/x", "--additional-write", extra,
                                 "--justification", "it writes there", "--approval-command", reject)
        self.assertEqual(result["kind"], "rejected", result)
        self.assertEqual(result["message"], f'the user rejected escalating this command to "workspace-write" with '
                                            f'the writable root "{extra}"; it stays denied, so stop and explain '
                                            f'instead of working around it')
        self.assertIsNone(result["sandbox"]["backend"])
        self.assertFalse(os.path.exists(ran))
        self.assertEqual(os.listdir(extra), [])
        self.assertTrue(os.path.exists(saved))
        human, _ = self.bash(f"touch {shlex.quote(ran)}", "--additional-write", extra, "--justification", "again",
                             "--approval-command", reject, json_form=False)
        self.assertEqual(human.returncode, 1, human.stderr)
        self.assertFalse(os.path.exists(ran))

    def test_bad_grants_are_refused_before_anything_is_asked(self):
        asked = os.path.join(self.place, "asked")
        approve = f"touch {shlex.quote(asked)}"
        newline = os.path.join(self.outside, "a\nb")
        os.makedirs(newline)
        with open(os.path.join(self.outside, "file"), "w", encoding="utf-8"):
            pass
        cases = [
            (["--additional-write", self.outside], "invalid escalation: additional_write requires a justification"),
            (["--additional-host", "example.com"], "invalid escalation: additional_hosts requires a justification"),
            (["--additional-write", os.path.join(self.outside, "none"), "--justification", "j"],
             f'invalid escalation: additional_write "{self.outside}/none" does not exist'),
            (["--additional-write", os.path.join(self.outside, "file"), "--justification", "j"],
             "is not a directory"),
            (["--additional-write", newline, "--justification", "j"], "holds a line break"),
            (["--additional-write", self.outside, "--justification", "j", "--sandbox-permissions",
              "danger-full-access"], "additional_write needs workspace-write"),
            (["--additional-host", "example.com", "--justification", "j"],
             "additional_hosts needs a restricted network"),
            (["--additional-host", "*", "--network", "off", "--justification", "j"], 'additional_hosts "*"'),
            (["--additional-host", "example.com", "--network", "off", "--justification", "line\nbreak"],
             "invalid justification: expected a non-empty sentence"),
        ]
        for options, said in cases:
            with self.subTest(options=options):
                done, _ = self.bash("touch ran", *options, "--approval-command", approve)
                self.assertEqual(done.returncode, 2, done.stderr)
                self.assertIn(said, done.stderr)
                self.assertEqual(len(done.stderr.splitlines()), 1, done.stderr)
                self.assertFalse(os.path.exists(asked))
                self.assertFalse(os.path.exists(os.path.join(self.workspace, "ran")))
        done, _ = self.bash("touch ran", "--additional-write", self.outside, "--justification", "j",
                            "--approval-command", approve, mode="read-only")
        self.assertEqual(done.returncode, 2, done.stderr)
        self.assertIn('additional_write needs workspace-write, as this call\'s mode or its sandbox_permissions '
                      '(the call would run under "read-only")', done.stderr)
        self.assertFalse(os.path.exists(asked))

    def test_additional_host_reaches_a_loopback_server_only_with_the_grant(self):
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), QuietHandler)
        server.paths = []
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        self.addCleanup(server.server_close)
        self.addCleanup(server.shutdown)
        host = f"127.0.0.1:{server.server_address[1]}"

        def curl(path):
            return f"curl -sS --max-time 20 -o - -w '\\ncode %{{http_code}}\\n' http://{host}{path} 2>&1; true"

        done, result = self.bash(curl("/before"), "--network", "off")
        self.assertNotIn("code 200", result["stdout"]["text"], result)
        self.assertEqual(server.paths, [])
        approve, saved, variables = self.approval("approve")
        done, result = self.bash(curl("/granted"), "--network", "off", "--additional-host", host,
                                 "--justification", "the test reaches its own server", "--approval-command", approve)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn("fixture /granted", result["stdout"]["text"], result)
        self.assertIn("code 200", result["stdout"]["text"], result)
        self.assertEqual(server.paths, ["/granted"])
        request, environment = self.read_approval(saved, variables)
        self.assertEqual(request["additionalHosts"], [host], request)
        self.assertEqual(request["additionalWrite"], [], request)
        self.assertEqual(environment.get("DSH_SANDBOX_ESCALATION_ADDITIONAL_HOSTS"), host, environment)
        self.assertNotIn("DSH_SANDBOX_ESCALATION_ADDITIONAL_WRITE", environment)
        done, result = self.bash(curl("/after"), "--network", "off")
        self.assertNotIn("code 200", result["stdout"]["text"], result)
        self.assertEqual(server.paths, ["/granted"])


class UnderBwrap(DenialsBash, unittest.TestCase):
    backend = "bwrap"


class UnderLandlock(DenialsBash, unittest.TestCase):
    backend = "landlock"


if __name__ == "__main__":
    sys.exit(livability.run_suite(__name__))
