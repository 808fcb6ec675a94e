#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The remote provider against a real OpenSSH server (tests/remote/sshd_fixture.py).

The "remote" host is this machine through a throwaway sshd on 127.0.0.1, with
its own state directory; the client reaches it through its own ssh config
(sshCommand ["ssh", "-F", CONFIG]) and keeps its control sockets in a private
XDG_RUNTIME_DIR.  Every outcome is checked on disk or by the exit status, and
every fail-closed case checks that the command did not run anywhere.
"""
import fcntl
import hashlib
import json
import os
import pwd
import shutil
import socket
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sshd_fixture  # noqa: E402

DSH_SANDBOX = os.environ["DSH_SANDBOX_BIN"]
HOST = "remote-test"
SERVER = None
STDIN_WINDOW = 1024 * 1024   # DSH_REMOTE_STDIN_WINDOW (src/remote/remote-frame.h)


def setUpModule():
    global SERVER
    try:
        SERVER = sshd_fixture.SshServer(DSH_SANDBOX)
    except sshd_fixture.SkipTest as reason:
        raise unittest.SkipTest(str(reason))


def tearDownModule():
    if SERVER:
        SERVER.close()
        if SERVER.helper_diagnostics():
            raise AssertionError("the remote helper wrote to its stderr:\n" + SERVER.helper_diagnostics())


def fake_remote(name, frames_python):
    """A remoteProgram that is not dsh-sandbox's helper: it writes what `frames_python` builds, raw."""
    return SERVER.wrapper(name, "exec python3 - <<'PY'\nimport json, os, struct, sys\n"
                          "def frame(kind, payload):\n"
                          "    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()\n"
                          "    sys.stdout.buffer.write(kind.encode() + struct.pack('>I', len(data)) + data)\n"
                          + frames_python + "\nsys.stdout.flush()\nPY\n")


class RemoteCase(unittest.TestCase):
    def setUp(self):
        self.work = tempfile.mkdtemp(prefix="case-", dir=SERVER.dir)
        os.chmod(self.work, 0o755)
        self.workspace = os.path.join(self.work, "workspace")
        self.outside = os.path.join(self.work, "outside")
        os.makedirs(self.workspace)
        os.makedirs(self.outside)
        # Short: the control socket's path must fit a unix socket name.
        self.runtime_dir = tempfile.mkdtemp(prefix="dshr", dir="/var/tmp")

    def tearDown(self):
        SERVER.stop_shared_connections(self.runtime_dir)
        shutil.rmtree(self.runtime_dir, ignore_errors=True)

    def config(self, **overrides):
        values = {"sshCommand": ["ssh", "-F", SERVER.ssh_config], "remoteProgram": SERVER.remote_program}
        values.update(overrides)
        path = os.path.join(self.work, "config-%d.json" % len(os.listdir(self.work)))
        with open(path, "w") as handle:
            json.dump(values, handle)
        return path

    def env(self, config=None, runtime_dir=None):
        env = dict(os.environ)
        env["DSH_SANDBOX_CONFIG"] = config or self.config()
        env["XDG_RUNTIME_DIR"] = runtime_dir or self.runtime_dir
        env["DSH_SANDBOX_STATE_DIR"] = os.path.join(self.work, "local-state")
        return env

    def dsh(self, *args, stdin=b"", config=None, runtime_dir=None, host=HOST, command=None):
        argv = [DSH_SANDBOX] + list(args[:1]) + (["--remote", host] if host else []) + list(args[1:])
        if command:
            argv += ["--"] + list(command)
        return subprocess.run(argv, input=stdin, capture_output=True, env=self.env(config, runtime_dir),
                              timeout=120)

    def run_remote(self, *command, stdin=b"", mode="workspace-write", **kwargs):
        return self.dsh("run", "--mode", mode, "--root", self.workspace, command=command, stdin=stdin, **kwargs)

    def start_waiting_remote(self, config=None, **popen):
        """`run --remote` of a Landlock-confined `sleep 1000` that has written its remote pid: (process, pid)."""
        pid_file = os.path.join(self.workspace, "pid")
        process = subprocess.Popen([DSH_SANDBOX, "run", "--remote", HOST, "--backend", "landlock", "--mode",
                                    "workspace-write", "--root", self.workspace, "--", "sh", "-c",
                                    'echo $$ > "$1"; echo ready; exec sleep 1000', "sh", pid_file],
                                   stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, env=self.env(config), **popen)
        self.assertEqual(process.stdout.readline(), b"ready\n")
        with open(pid_file) as handle:
            return process, int(handle.read())

    def assert_never_ran(self, result, marker, reason):
        self.assertEqual(result.returncode, 125, result.stderr)
        self.assertIn(b"SANDBOX_UNAVAILABLE", result.stderr)
        self.assertIn(reason.encode(), result.stderr)
        self.assertEqual(result.stderr.count(b"\n"), 1, result.stderr)
        self.assertFalse(os.path.exists(marker), "the command ran although the call failed")


class Facts(RemoteCase):
    def test_confine_prints_the_remote_facts_resolved_there(self):
        # The root is named through a symlink: the remote canonicalizes it, not this side.
        link = os.path.join(self.work, "link")
        os.symlink(self.workspace, link)
        result = self.dsh("confine", "--mode", "workspace-write", "--root", link, command=["echo", "hi"])
        self.assertEqual(result.returncode, 0, result.stderr)
        facts = json.loads(result.stdout)
        self.assertEqual(facts["argv"][-2:], ["echo", "hi"])
        self.assertIn(facts["enforcement"], ("full", "partial"))
        self.assertTrue(facts["runnerFailureRules"][0]["fatalSignatures"])
        self.assertIn(self.workspace, facts["argv"])
        self.assertNotIn(link, facts["argv"])

    def test_confine_refuses_danger_full_access_as_locally(self):
        result = self.dsh("confine", "--mode", "danger-full-access", command=["true"])
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn(b"needs no confinement", result.stderr)

    def test_probe_prints_the_remote_report(self):
        result = self.dsh("probe")
        self.assertEqual(result.returncode, 0, result.stderr)
        report = json.loads(result.stdout)
        self.assertTrue(report["selected"])
        self.assertTrue(any(backend["usable"] for backend in report["backends"]))

    def confine_answered_with(self, name, facts):
        """confine --remote against a fake helper that answers `facts`."""
        fake = fake_remote(name, "frame('H', {'protocol': 2, 'version': 'x'})\n"
                           "frame('F', {'outcome': 'answered', 'answer': %r})" % (facts,))
        return self.dsh("confine", "--mode", "workspace-write", config=self.config(remoteProgram=fake),
                        command=["true"])

    def test_facts_that_do_not_validate_are_refused(self):
        rule = {"fatalSignatures": ["x: "]}
        for name, facts, reason in (
                ("empty-argv", {"argv": [], "enforcement": "full", "denialSignatures": [],
                                "runnerFailureRules": [rule]}, b'"argv"'),
                ("bad-enforcement", {"argv": ["x"], "enforcement": "some", "denialSignatures": [],
                                     "runnerFailureRules": [rule]}, b'"enforcement"'),
                ("no-rules", {"argv": ["x"], "enforcement": "full", "denialSignatures": [],
                              "runnerFailureRules": []}, b'"runnerFailureRules"'),
                ("unknown-member", {"argv": ["x"], "enforcement": "full", "denialSignatures": [],
                                    "runnerFailureRules": [rule], "unconfined": True}, b'"unconfined"')):
            with self.subTest(case=name):
                result = self.confine_answered_with(name, facts)
                self.assertEqual(result.returncode, 125, result.stderr)
                self.assertIn(b"SANDBOX_UNAVAILABLE", result.stderr)
                self.assertIn(reason, result.stderr)
                self.assertEqual(result.stdout, b"")

    def test_valid_facts_from_any_helper_are_printed_as_validated(self):
        facts = {"argv": ["/usr/bin/runner", "--", "true"], "enforcement": "partial", "denialSignatures": ["denied"],
                 "runnerFailureRules": [{"fatalSignatures": ["runner: "]}], "partialReasons": ["a reason"]}
        result = self.confine_answered_with("good-facts", facts)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(json.loads(result.stdout), facts)


class Running(RemoteCase):
    def test_a_write_inside_the_root_lands_and_one_outside_is_denied(self):
        result = self.run_remote("sh", "-c", 'echo in > "$1/inside"; echo out > "$2/outside"', "sh",
                                 self.workspace, self.outside)
        self.assertNotEqual(result.returncode, 0)
        with open(os.path.join(self.workspace, "inside")) as handle:
            self.assertEqual(handle.read(), "in\n")
        self.assertFalse(os.path.exists(os.path.join(self.outside, "outside")))

    def test_the_network_policy_is_held_on_the_remote(self):
        # A server on this host's loopback, which is the remote's too: under --network off the remote's
        # supervisor refuses the connect and the server never sees it; under on it is reached.
        server = socket.socket()
        server.bind(("127.0.0.1", 0))
        server.listen(8)
        server.settimeout(0.2)
        port = server.getsockname()[1]
        probe = "import socket,sys; s=socket.socket(); sys.exit(s.connect_ex(('127.0.0.1', %d)))" % port
        try:
            for backend in ("landlock", "bwrap"):
                with self.subTest(backend=backend):
                    refused = self.dsh("run", "--backend", backend, "--network", "off", command=["python3", "-c", probe])
                    self.assertNotEqual(refused.returncode, 0, refused.stderr)
                    with self.assertRaises(socket.timeout):
                        server.accept()[0].close()
                    reached = self.dsh("run", "--backend", backend, command=["python3", "-c", probe])
                    self.assertEqual(reached.returncode, 0, reached.stderr)
                    server.accept()[0].close()
        finally:
            server.close()

    def test_read_only_denies_the_root_too(self):
        result = self.run_remote("touch", os.path.join(self.workspace, "file"), mode="read-only")
        self.assertNotEqual(result.returncode, 0)
        self.assertFalse(os.path.exists(os.path.join(self.workspace, "file")))

    def test_stdin_stdout_and_stderr_are_streamed_apart(self):
        data = os.urandom(3 * 1024 * 1024)
        result = self.run_remote("sh", "-c", "cat; echo to-stderr >&2", stdin=data)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stdout, data)
        self.assertEqual(result.stderr, b"to-stderr\n")

    def test_exit_statuses_pass_through_the_commands_own_255_included(self):
        for status in (0, 1, 3, 125, 255):
            with self.subTest(status=status):
                result = self.run_remote("sh", "-c", "exit %d" % status)
                self.assertEqual(result.returncode, status, result.stderr)
                self.assertEqual(result.stderr, b"")

    def test_a_death_by_signal_is_a_death_by_the_same_signal(self):
        # Under Landlock the remote command is the helper's own child, so its death is seen as such
        # (bwrap itself exits 128+N for a command's death, on the remote as locally).
        result = self.dsh("run", "--backend", "landlock", command=["sh", "-c", "kill -TERM $$"])
        self.assertEqual(result.returncode, -signal.SIGTERM, result.stderr)
        shell = subprocess.run(["sh", "-c", '"$@"; echo "status $?"', "sh", DSH_SANDBOX, "run", "--remote", HOST,
                                "--backend", "landlock", "--", "sh", "-c", "kill -USR1 $$"], capture_output=True,
                               env=self.env(), timeout=120)
        self.assertEqual(shell.stdout, b"status %d\n" % (128 + signal.SIGUSR1))

    def test_output_that_looks_like_a_final_record_is_output(self):
        # The command writes a well-formed final record saying "exited 0": the helper frames it as stdout.
        forged = b'F\x00\x00\x00\x24{"outcome":"exited","status":0}    '
        result = self.run_remote("sh", "-c", "printf 'F\\000\\000\\000\\044%s'; exit 7" % forged[5:].decode())
        self.assertEqual(result.returncode, 7)
        self.assertEqual(result.stdout, forged)

    def test_partial_enforcement_on_the_remote_is_announced_here(self):
        # A launch config reached through a symlink inside the root could be repointed by the command: no
        # backend holds it, and the remote says so before it runs.  (Under Landlock an existing one, or a
        # missing one, is held back since issue 20: full.)
        subprocess.run(["git", "init", "-q", self.workspace], check=True)
        os.makedirs(os.path.join(self.workspace, "cfg"))
        os.symlink("cfg", os.path.join(self.workspace, ".claude"))
        result = self.dsh("run", "--backend", "bwrap", "--mode", "workspace-write", "--root", self.workspace,
                          command=["true"])
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn(b"dsh-sandbox: notice: partial enforcement under bwrap: ", result.stderr)
        self.assertIn(b".claude is reached through a symlink the command could repoint", result.stderr)
        os.unlink(os.path.join(self.workspace, ".claude"))
        full = self.dsh("run", "--backend", "landlock", "--mode", "workspace-write", "--root", self.workspace,
                        command=["true"])
        self.assertEqual(full.returncode, 0, full.stderr)
        self.assertNotIn(b"partial enforcement", full.stderr)

    def test_a_program_that_cannot_be_found_is_127_and_nothing_ran(self):
        result = self.run_remote("/nonexistent/program")
        self.assertEqual(result.returncode, 127, result.stderr)
        self.assertIn(b"No such file or directory", result.stderr)

    def test_a_root_the_remote_refuses_is_125_with_the_remotes_reason(self):
        marker = os.path.join(self.outside, "ran")
        result = self.dsh("run", "--mode", "workspace-write", "--root", "/nonexistent/root",
                          command=["touch", marker])
        self.assertEqual(result.returncode, 125, result.stderr)
        self.assertIn(b'remote "remote-test"', result.stderr)
        self.assertIn(b"/nonexistent/root", result.stderr)
        self.assertFalse(os.path.exists(marker))

    def test_a_signal_to_the_local_run_reaches_the_remote_command(self):
        script = 'trap "echo got-$1; exit 7" %s; echo ready; while :; do sleep 0.05; done'
        for name in ("TERM", "INT", "HUP"):
            with self.subTest(signal=name):
                process = subprocess.Popen([DSH_SANDBOX, "run", "--remote", HOST, "--", "sh", "-c",
                                            script % name, "sh", name], stdin=subprocess.DEVNULL,
                                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=self.env(),
                                           preexec_fn=sshd_fixture.default_stopping_signals)
                self.assertEqual(process.stdout.readline(), b"ready\n")
                process.send_signal(getattr(signal, "SIG" + name))
                out, err = process.communicate(timeout=60)
                self.assertEqual(process.returncode, 7, err)
                self.assertEqual(out, b"got-%s\n" % name.encode())

    def test_the_remote_command_ends_when_the_local_run_is_killed(self):
        # SIGKILL cannot be passed on: ssh dies with run, and the helper, its channel gone, kills the command.
        process, remote_pid = self.start_waiting_remote()
        process.kill()
        process.wait()
        process.stdout.close()
        deadline = time.monotonic() + 60
        while os.path.exists("/proc/%d" % remote_pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertFalse(os.path.exists("/proc/%d" % remote_pid), "the remote command outlived its caller")

    def test_session_is_refused_with_remote(self):
        result = self.dsh("run", "--session", "abc", command=["true"])
        self.assertEqual(result.returncode, 2)
        self.assertIn(b"--session cannot be used with --remote", result.stderr)


class BashTool(RemoteCase):
    def bash(self, *args, **kwargs):
        return self.dsh("bash", "--mode", "workspace-write", "--root", self.workspace, *args, **kwargs)

    def test_attribution_runs_on_the_remote_and_the_result_comes_back(self):
        result = self.bash("--json", 'echo in > "%s/a"; echo out > "%s/b"' % (self.workspace, self.outside))
        self.assertEqual(result.returncode, 0, result.stderr)
        tool = json.loads(result.stdout)
        self.assertEqual(tool["kind"], "denied")
        self.assertTrue(tool["sandbox"]["denied"])
        self.assertEqual(tool["sandbox"]["mode"], "workspace-write")
        self.assertIn("[sandbox: file access denied under workspace-write mode]", tool["markers"])
        self.assertTrue(os.path.exists(os.path.join(self.workspace, "a")))
        self.assertFalse(os.path.exists(os.path.join(self.outside, "b")))

    def test_the_human_form_streams_and_exits_like_the_command(self):
        result = self.bash("echo out; echo err >&2; exit 3")
        self.assertEqual(result.returncode, 3, result.stderr)
        self.assertEqual(result.stdout, b"out\n")
        self.assertIn(b"err\n", result.stderr)

    def test_a_timeout_is_the_remote_tools(self):
        result = self.bash("--timeout", "300", "exec sleep 1000")
        self.assertEqual(result.returncode, 124, result.stderr)
        self.assertIn(b"did not finish within 300 ms", result.stderr)

    def test_a_signal_cancels_the_remote_call(self):
        process = subprocess.Popen([DSH_SANDBOX, "bash", "--remote", HOST,
                                    "trap 'echo got-INT; exit 9' INT; echo ready; while :; do sleep 0.05; done"],
                                   stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   env=self.env())
        self.assertEqual(process.stdout.readline(), b"ready\n")
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
        self.assertEqual(process.returncode, 128 + signal.SIGINT, err)
        self.assertEqual(out, b"got-INT\n")
        self.assertIn(b"cancel", err)

    def test_an_escalation_is_never_asked_of_the_remote(self):
        marker = os.path.join(self.outside, "ran")
        result = self.bash("--sandbox-permissions", "danger-full-access", "--justification", "needs it",
                           "touch %s" % marker)
        self.assertEqual(result.returncode, 2)
        self.assertIn(b"approve the escalation here", result.stderr)
        self.assertFalse(os.path.exists(marker))

    def test_a_result_that_does_not_validate_is_refused(self):
        fake = fake_remote("bad-bash", "frame('H', {'protocol': 2, 'version': 'x'})\n"
                           "frame('F', {'outcome': 'answered', 'answer': {'kind': 'completed', 'exitCode': 0}})")
        result = self.bash("--json", "true", config=self.config(remoteProgram=fake))
        self.assertEqual(result.returncode, 125, result.stderr)
        self.assertIn(b"SANDBOX_UNAVAILABLE", result.stderr)
        self.assertEqual(result.stdout, b"")


class FailClosed(RemoteCase):
    def marker(self):
        return os.path.join(self.outside, "ran")

    def test_no_dsh_sandbox_on_the_remote(self):
        config = self.config(remoteProgram="/nonexistent/dsh-sandbox")
        result = self.run_remote("touch", self.marker(), config=config)
        self.assert_never_ran(result, self.marker(), 'no "/nonexistent/dsh-sandbox" on the remote host')

    def test_a_remote_that_cannot_confine(self):
        # The remote's only backend is a bwrap that is /bin/false: its runner fails before exec.
        broken = SERVER.remote_wrapper("remote-no-sandbox", "DSH_SANDBOX_BWRAP=/bin/false")
        result = self.dsh("run", "--mode", "workspace-write", "--root", self.workspace, "--backend", "bwrap",
                          config=self.config(remoteProgram=broken), command=["touch", self.marker()])
        self.assert_never_ran(result, self.marker(), 'remote "remote-test"')

    def test_an_unreachable_host(self):
        result = self.run_remote("touch", self.marker(), host="unreachable")
        self.assert_never_ran(result, self.marker(), "Connection refused")

    def test_an_unknown_host_key(self):
        # A runtime directory of its own: no shared connection was ever authenticated for this call.
        fresh = os.path.join(self.runtime_dir, "fresh")
        os.mkdir(fresh, 0o700)
        result = self.run_remote("touch", self.marker(), host="unknown-key", runtime_dir=fresh)
        self.assert_never_ran(result, self.marker(), "Host key verification failed")

    def test_a_destination_that_looks_like_an_option_stays_a_destination(self):
        result = self.run_remote("true", host="-oProxyCommand=touch %s" % self.marker())
        self.assertEqual(result.returncode, 125, result.stderr)
        self.assertIn(b"SANDBOX_UNAVAILABLE", result.stderr)
        self.assertFalse(os.path.exists(self.marker()), "the destination was taken as an ssh option")

    def test_a_remote_that_answers_something_else(self):
        fake = SERVER.wrapper("not-a-helper", "echo 'Welcome to the remote host'\n")
        result = self.run_remote("touch", self.marker(), config=self.config(remoteProgram=fake))
        self.assert_never_ran(result, self.marker(), "other than dsh-sandbox frames")

    def test_an_older_dsh_sandbox_without_the_helper(self):
        fake = SERVER.wrapper("old-dsh", "echo 'dsh-sandbox: usage error: unknown command \"remote-helper\"' >&2\n"
                              "exit 2\n")
        result = self.run_remote("touch", self.marker(), config=self.config(remoteProgram=fake))
        self.assert_never_ran(result, self.marker(), 'exited with 2 without a final record: dsh-sandbox: usage error: '
                              'unknown command "remote-helper"')

    def test_a_remote_of_another_protocol_version(self):
        fake = fake_remote("future", "frame('H', {'protocol': 99, 'version': '9.0'})\n"
                           "frame('F', {'outcome': 'exited', 'status': 0})")
        result = self.run_remote("touch", self.marker(), config=self.config(remoteProgram=fake))
        self.assert_never_ran(result, self.marker(), "speaks protocol 99")

    def test_the_helper_refuses_a_request_of_another_protocol_version(self):
        request = json.dumps({"protocol": 99, "operation": "run", "argv": ["touch", self.marker()]}).encode()
        framed = b"Q" + len(request).to_bytes(4, "big") + request + b"Z\x00\x00\x00\x00"
        helper = subprocess.run([SERVER.remote_program, "remote-helper"], input=framed, capture_output=True,
                                timeout=60)
        frames = helper.stdout
        hello_length = int.from_bytes(frames[1:5], "big")
        final = frames[5 + hello_length:]
        self.assertEqual(final[:1], b"F")
        record = json.loads(final[5:])
        self.assertEqual(record["outcome"], "refused")
        self.assertIn("speaks protocol 99", record["error"]["message"])
        self.assertFalse(os.path.exists(self.marker()))

    def test_a_credit_for_stdin_never_sent_is_a_protocol_error(self):
        # The caller's count of stdin in flight never goes below zero: a helper that says otherwise is not one.
        fake = fake_remote("overcredit", "frame('H', {'protocol': 2, 'version': 'x'})\n"
                           "frame('C', struct.pack('>I', 5))\n"
                           "frame('F', {'outcome': 'exited', 'status': 0})")
        result = self.run_remote("touch", self.marker(), config=self.config(remoteProgram=fake))
        self.assert_never_ran(result, self.marker(), "credited stdin it was never sent")

    def test_a_refusal_is_shown_as_one_line(self):
        fake = fake_remote("multi-line", "frame('H', {'protocol': 2, 'version': 'x'})\n"
                           "frame('F', {'outcome': 'refused', 'errno': 0, 'error': {'code': 'SANDBOX_UNAVAILABLE',"
                           " 'message': 'no\\nsecond line\\x1b[31m'}})")
        result = self.run_remote("touch", self.marker(), config=self.config(remoteProgram=fake))
        self.assert_never_ran(result, self.marker(), "no\\x0asecond line\\x1b[31m")

    def test_a_transport_that_drops_mid_run_is_125_not_the_commands_status(self):
        # ssh's own 255 (here: a "remote" that kills its ssh session) is never read as the command's.
        fake = fake_remote("drop", "frame('H', {'protocol': 2, 'version': 'x'})\n"
                           "frame('O', b'partial')\nsys.stdout.flush()\nos._exit(255)")
        result = self.run_remote("true", config=self.config(remoteProgram=fake))
        self.assertEqual(result.returncode, 125, result.stderr)
        self.assertEqual(result.stdout, b"partial")
        self.assertIn(b"SANDBOX_UNAVAILABLE", result.stderr)
        self.assertIn(b"exit 255", result.stderr)


def parent_pid(pid):
    with open("/proc/%d/stat" % pid) as handle:
        return int(handle.read().rsplit(")", 1)[1].split()[1])


def command_line(pid):
    with open("/proc/%s/cmdline" % pid, "rb") as handle:
        return handle.read().split(b"\0")


def serving_helpers():
    """The helpers serving a call (found by their argv) under this fixture's sshd, not another run's: a
    session's remote-helper, or a call's child of the remote service (its argv is the service's)."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            argv = command_line(entry)
            served = b"remote-service" in argv and b"remote-service" in command_line(parent_pid(int(entry)))
            if b"remote-helper" not in argv and not served:
                continue
            with open("/proc/%s/comm" % entry, "rb") as handle:
                if handle.read().strip() == b"dsh-stand-in":
                    continue   # a Landlock call's stand-in, forked from the helper: its argv is the helper's
            pid = int(entry)
            while pid > 1 and pid != SERVER.process.pid:
                pid = parent_pid(pid)
        except (OSError, ValueError):
            continue
        if pid == SERVER.process.pid:
            found.append(int(entry))
    return found


def memory_kib(pid, key):
    with open("/proc/%d/status" % pid) as handle:
        for line in handle:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    raise AssertionError("no %s for process %d" % (key, pid))


class Feeder(threading.Thread):
    """Writes `total` bytes into a pipe the local run reads as its stdin, counting what the pipe took."""

    def __init__(self, total):
        super().__init__(daemon=True)
        self.read_end, self.write_end = os.pipe()
        self.total, self.written = total, 0

    def run(self):
        chunk = b"y" * 65536
        try:
            while self.written < self.total:
                self.written += os.write(self.write_end, chunk[:self.total - self.written])
        except BrokenPipeError:
            pass   # the run ended: its stdin with it
        os.close(self.write_end)

    def settle(self):
        """Waits until the writer is done or has stopped moving (readiness, not a timed assertion)."""
        last, still = -1, 0
        while self.is_alive() and still < 20:
            time.sleep(0.1)
            still = still + 1 if self.written == last else 0
            last = self.written


class StdinFlow(RemoteCase):
    TRAP = 'trap "echo got-TERM; exit 7" TERM; %s echo ready; while :; do sleep 0.05; done'

    def start_run(self, feeder, script):
        # Landlock: the command is the process itself, so its stdin closed is the pipe's last reader gone.
        process = subprocess.Popen([DSH_SANDBOX, "run", "--remote", HOST, "--backend", "landlock", "--", "sh",
                                    "-c", script],
                                   stdin=feeder.read_end, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   env=self.env(), preexec_fn=sshd_fixture.default_stopping_signals)
        os.close(feeder.read_end)
        self.assertEqual(process.stdout.readline(), b"ready\n")
        return process

    def finish_with_a_signal(self, process, feeder):
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=60)
        feeder.join(60)
        self.assertEqual(process.returncode, 7, err)
        self.assertEqual(out, b"got-TERM\n")

    def test_a_command_that_never_reads_stdin_holds_the_writer_and_the_helper_stays_small(self):
        # As locally `yes | sleep 30` blocks `yes`: the remote queue never holds more than the window,
        # and a signal still reaches the command while the window is full.
        fed = 64 * STDIN_WINDOW
        feeder = Feeder(fed)
        process = self.start_run(feeder, self.TRAP % "")
        helpers = serving_helpers()
        self.assertEqual(len(helpers), 1, "the helper serving this run, by its argv")
        baseline = memory_kib(helpers[0], "VmRSS")
        feeder.start()
        feeder.settle()
        peak = memory_kib(helpers[0], "VmHWM")
        self.assertLess(feeder.written, fed, "the local writer was never held")
        # The window, the frame reader's buffer and the allocator's slack (ASan's quarantine too): a
        # quarter of what was fed, where an unbounded queue holds all of it.
        self.assertLess((peak - baseline) * 1024, fed // 4, "the helper grew from %d to %d KiB" % (baseline, peak))
        self.finish_with_a_signal(process, feeder)
        self.assertLess(feeder.written, fed)

    def test_a_command_that_closed_its_stdin_still_lets_the_writer_finish(self):
        # The helper drops what the command can no longer take, and credits it: the caller never stalls.
        feeder = Feeder(8 * STDIN_WINDOW)
        process = self.start_run(feeder, self.TRAP % "exec 0<&-;")
        feeder.start()
        feeder.join(60)
        self.assertFalse(feeder.is_alive(), "the writer stalled behind a closed stdin")
        self.assertEqual(feeder.written, feeder.total)
        self.finish_with_a_signal(process, feeder)

    def test_a_command_that_reads_all_its_stdin_gets_all_of_it(self):
        data = os.urandom(20 * 1024 * 1024)
        result = self.run_remote("sha256sum", stdin=data)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stdout.split()[0].decode(), hashlib.sha256(data).hexdigest())

    @staticmethod
    def write_ignoring_the_end(pipe, data):
        try:
            pipe.write(data)
            pipe.flush()
        except BrokenPipeError:
            pass

    def test_the_helper_refuses_stdin_beyond_the_window(self):
        # A caller that ignores its window (broken or hostile) ends the channel: no final record, the
        # command killed, never a queue as big as what it sends.
        pid_file = os.path.join(self.workspace, "pid")
        request = json.dumps({"protocol": 2, "operation": "run", "mode": "workspace-write",
                              "workspaceRoot": self.workspace, "backend": "landlock",
                              "argv": ["sh", "-c", 'echo $$ > "$1"; exec sleep 1000', "sh", pid_file]}).encode()
        chunk = b"y" * 65536
        stdin = b"I" + len(chunk).to_bytes(4, "big") + chunk
        flood = stdin * (4 * STDIN_WINDOW // len(chunk))
        # The channel stays open: the helper must end it itself, not wait for the caller to hang up.
        helper = subprocess.Popen([SERVER.remote_program, "remote-helper"], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE)
        # The flood only once the command runs, so that "the command killed" is checked on a live one.
        helper.stdin.write(b"Q" + len(request).to_bytes(4, "big") + request)
        helper.stdin.flush()
        remote_pid = self.wait_for_pid(pid_file, helper)
        writer = threading.Thread(target=self.write_ignoring_the_end, args=(helper.stdin, flood), daemon=True)
        writer.start()
        try:
            helper.wait(timeout=60)
        except subprocess.TimeoutExpired:
            helper.kill()
            helper.wait()
            self.fail("the helper queued stdin beyond the window instead of ending the channel")
        finally:
            writer.join(60)
            helper.stdin.close()
        self.assertNotEqual(helper.returncode, 0)
        kinds, frames = [], helper.stdout.read()
        helper.stdout.close()
        while frames:
            kinds.append(frames[:1])
            frames = frames[5 + int.from_bytes(frames[1:5], "big"):]
        self.assertEqual(kinds[0], b"H")
        self.assertNotIn(b"F", kinds, "a final record after a protocol error")
        self.assertFalse(os.path.exists("/proc/%d" % remote_pid), "the command outlived the channel")

    def wait_for_pid(self, pid_file, helper):
        """The pid the command wrote to `pid_file`, once it has (the helper still serving it)."""
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and helper.poll() is None:
            if os.path.exists(pid_file):
                with open(pid_file) as handle:
                    content = handle.read()
                if content.endswith("\n"):
                    return int(content)
            time.sleep(0.05)
        helper.kill()
        helper.wait()
        self.fail("the command never started under the helper")


class ConnectionReuse(RemoteCase):
    def test_the_second_call_opens_no_new_connection(self):
        self.assertEqual(self.run_remote("true").returncode, 0)
        before = SERVER.connections()
        for _ in range(3):
            self.assertEqual(self.run_remote("true").returncode, 0)
        self.assertEqual(SERVER.connections(), before)
        control = os.path.join(self.runtime_dir, "dsh-sandbox", "ssh")
        self.assertEqual(stat.S_IMODE(os.stat(control).st_mode), 0o700)
        self.assertTrue(any(stat.S_ISSOCK(os.lstat(os.path.join(control, name)).st_mode)
                            for name in os.listdir(control)))

    def test_a_control_directory_someone_else_owns_is_not_used(self):
        control = os.path.join(self.runtime_dir, "dsh-sandbox", "ssh")
        os.makedirs(control, mode=0o777)
        os.chmod(control, 0o777)
        os.chown(control, 65534, 65534)
        before = SERVER.connections()
        for _ in range(2):
            result = self.run_remote("true")
            self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(os.listdir(control), [])
        self.assertEqual(SERVER.connections(), before + 2)

    def test_a_multiplexing_the_user_configured_is_theirs(self):
        result = self.dsh("run", command=["true"], host="own-mux")
        self.assertEqual(result.returncode, 0, result.stderr)
        own = os.path.join(SERVER.own_mux_dir(), "own-mux")
        self.assertTrue(any(stat.S_ISSOCK(os.lstat(os.path.join(own, name)).st_mode) for name in os.listdir(own)))
        self.assertFalse(os.path.exists(os.path.join(self.runtime_dir, "dsh-sandbox", "ssh")))

    def test_control_path_none_in_ssh_command_turns_sharing_off(self):
        # The opt-out docs/remote.md gives where untrusted commands run locally: no master, no socket.
        config = self.config(sshCommand=["ssh", "-o", "ControlPath=none", "-F", SERVER.ssh_config])
        before = SERVER.connections()
        for _ in range(2):
            result = self.run_remote("true", config=config)
            self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(SERVER.connections(), before + 2)
        control = os.path.join(self.runtime_dir, "dsh-sandbox", "ssh")
        self.assertFalse(any(stat.S_ISSOCK(os.lstat(os.path.join(control, name)).st_mode)
                             for name in (os.listdir(control) if os.path.isdir(control) else ())))

    def test_a_confined_command_cannot_touch_the_control_directory(self):
        self.assertEqual(self.run_remote("true").returncode, 0)
        control = os.path.join(self.runtime_dir, "dsh-sandbox", "ssh")
        planted = os.path.join(control, "planted")
        local = subprocess.run([DSH_SANDBOX, "run", "--backend", "bwrap", "--mode", "workspace-write", "--root",
                                self.runtime_dir, "--", "sh", "-c", 'touch "$1"', "sh", planted],
                               capture_output=True, env=self.env(), timeout=120)
        self.assertNotEqual(local.returncode, 0)
        self.assertFalse(os.path.exists(planted))
        # Landlock can only grant: the write supervisor holds the directory back, so the call runs (the file
        # beside it is written) and the touch is refused.
        ordinary = os.path.join(self.runtime_dir, "ordinary")
        local = subprocess.run([DSH_SANDBOX, "run", "--backend", "landlock", "--mode", "workspace-write", "--root",
                                self.runtime_dir, "--", "sh", "-c", 'echo ran > "$2"; touch "$1"', "sh", planted,
                                ordinary], capture_output=True, env=self.env(), timeout=120)
        self.assertNotIn(local.returncode, (0, 125), local.stderr)
        self.assertIn(b"Permission denied", local.stderr)
        self.assertTrue(os.path.exists(ordinary), local.stderr)
        self.assertFalse(os.path.exists(planted))

    def assert_home_file_out_of_reach(self, plant, planted):
        """`sh -c plant sh HOME`, confined to a $HOME of its own under each backend, must not make `planted`
        (a path beneath HOME): bwrap holds it read-only, under Landlock the write supervisor refuses it.  The
        call runs under both (a file beside it is written) and ends with the plant's failure."""
        home = os.path.join(self.work, "home")
        os.makedirs(home)
        env = self.env()
        env.update(HOME=home, XDG_CACHE_HOME=os.path.join(self.work, "cache"),
                   XDG_CONFIG_HOME=os.path.join(self.work, "config-home"))
        ordinary = os.path.join(home, "ordinary")
        script = f'{plant}\nstatus=$?; echo ran > "$1/ordinary"; exit $status'
        for backend in ("bwrap", "landlock"):
            with self.subTest(backend=backend):
                local = subprocess.run([DSH_SANDBOX, "run", "--backend", backend, "--mode", "workspace-write",
                                        "--root", home, "--", "sh", "-c", script, "sh", home],
                                       capture_output=True, env=env, timeout=120)
                self.assertNotIn(local.returncode, (0, 125), local.stderr)
                self.assertTrue(os.path.exists(ordinary), local.stderr)
                os.unlink(ordinary)
                self.assertFalse(os.path.exists(os.path.join(home, planted)))

    def test_a_confined_command_cannot_plant_the_home_control_directory_either(self):
        # Confined where XDG_RUNTIME_DIR is set, a command whose root is $HOME could otherwise
        # make $HOME/.cache/dsh-sandbox/ssh (its uid, 0700: it passes every check) and listen
        # there for the next --remote call made without XDG_RUNTIME_DIR.
        control = '"$1/.cache/dsh-sandbox/ssh"'
        self.assert_home_file_out_of_reach(f"mkdir -p {control}; chmod 700 {control} && touch {control}/planted",
                                           ".cache/dsh-sandbox/ssh/planted")

    def test_a_confined_command_cannot_rename_the_cache_away_to_plant_the_control_directory(self):
        # Holding ssh/ read-only is not enough: with ~/.cache renamed away, a fresh
        # ~/.cache/dsh-sandbox/ssh of the command's making would pass every check.  Each
        # directory between the root and it is pinned, so the rename fails.
        control = '"$1/.cache/dsh-sandbox/ssh"'
        self.assert_home_file_out_of_reach(f'mv "$1/.cache" "$1/.cache-aside"; mkdir -p {control}; '
                                           f'chmod 700 {control} && touch {control}/planted',
                                           ".cache/dsh-sandbox/ssh/planted")

    def test_a_confined_command_cannot_write_the_ssh_config_the_next_call_reads(self):
        # A ProxyCommand in ~/.ssh/config would run unconfined on the next --remote call, and a
        # ControlPath there would hand that call to the command's own listener.
        self.assert_home_file_out_of_reach(
            'mkdir -p "$1/.ssh"; printf "Host *\\n  ProxyCommand sh -c \\"touch /pwned\\"\\n" > "$1/.ssh/config"',
            ".ssh/config")

    def test_the_ssh_config_ssh_reads_is_protected_whatever_home_says(self):
        # ssh reads the passwd entry's home, not $HOME: that one is held read-only too.
        home = pwd.getpwuid(os.geteuid()).pw_dir
        ssh_directory = os.path.join(home, ".ssh")
        existed = os.path.exists(ssh_directory)
        env = self.env()
        env.update(HOME=self.work, XDG_CACHE_HOME=os.path.join(self.work, "cache"),
                   XDG_CONFIG_HOME=os.path.join(self.work, "config-home"))
        try:
            facts = subprocess.run([DSH_SANDBOX, "confine", "--backend", "bwrap", "--mode", "workspace-write",
                                    "--root", home, "--", "true"], capture_output=True, env=env, timeout=120)
            self.assertEqual(facts.returncode, 0, facts.stderr)
            argv = json.loads(facts.stdout)["argv"]
            self.assertIn(["--ro-bind", ssh_directory, ssh_directory],
                          [argv[i:i + 3] for i in range(len(argv) - 2)])
        finally:
            if not existed and os.path.isdir(ssh_directory) and not os.listdir(ssh_directory):
                os.rmdir(ssh_directory)   # made by the runtime to be bound over: leave the home as it was

    def test_a_control_directory_ssh_would_expand_is_not_used(self):
        # ssh expands ${VARIABLE} in ControlPath: "<dir>/${X}" checked here would be "<dir>/<$X>" there.
        literal = os.path.join(self.runtime_dir, "${DSHX}")
        os.makedirs(literal)
        elsewhere = os.path.join(self.runtime_dir, "x", "dsh-sandbox", "ssh")
        os.makedirs(elsewhere, mode=0o777)
        os.chmod(elsewhere, 0o777)
        os.chown(elsewhere, 65534, 65534)
        env = self.env(runtime_dir=literal)
        env["DSHX"] = "x"
        try:
            result = subprocess.run([DSH_SANDBOX, "run", "--remote", HOST, "--mode", "workspace-write", "--root",
                                     self.workspace, "--", "true"], capture_output=True, env=env, timeout=120)
            self.assertEqual(result.returncode, 0, result.stderr)
            self.assertEqual(os.listdir(elsewhere), [])
            self.assertFalse(os.path.exists(os.path.join(literal, "dsh-sandbox", "ssh")))
        finally:
            SERVER.stop_shared_connections(os.path.join(self.runtime_dir, "x"))


class Configuration(RemoteCase):
    def test_bad_remote_keys_are_refused_naming_the_key(self):
        for key, value in (("sshCommand", []), ("sshCommand", [""]), ("sshCommand", "ssh"),
                           ("remoteProgram", ""), ("remoteProgram", "a\nb"), ("remoteProgram", 3)):
            with self.subTest(key=key, value=value):
                result = self.run_remote("true", config=self.config(**{key: value}))
                self.assertEqual(result.returncode, 2, result.stderr)
                self.assertIn(b'key "%s"' % key.encode(), result.stderr)


# A confined command trying the remote service's socket: each path in argv is connected to, and on a
# connect a request to touch the marker is sent (an unconfined run, were it served).  Prints what it got.
REACH_SERVICE = r'''
import json, os, socket, struct, sys
marker = sys.argv[1]
for path in sys.argv[2:]:
    try:
        peer = socket.socket(socket.AF_UNIX)
        peer.settimeout(20)
        peer.connect(path)
    except OSError as error:
        print("refused", path, error.errno)
        continue
    request = json.dumps({"protocol": 2, "operation": "run", "argv": ["touch", marker], "mode": "workspace-write",
                          "workspaceRoot": os.path.dirname(marker)}).encode()
    peer.sendall(b"Q" + struct.pack(">I", len(request)) + request + b"Z\0\0\0\0")
    answer = b""
    while b'"outcome"' not in answer:
        chunk = peer.recv(65536)
        if not chunk:
            break
        answer += chunk
    print("connected", path, answer)
'''


def service_ancestor(pid):
    """The remote service serving the call whose process is `pid`: its first ancestor that is a
    remote-service whose own parent is not one (the call's helper is a forked child of it)."""
    while pid > 1:
        parent = parent_pid(pid)
        if b"remote-service" in command_line(pid) and b"remote-service" not in command_line(parent):
            return pid
        pid = parent
    return None


class RemoteService(RemoteCase):
    """One remote service per destination serves every call over the shared connection (docs/remote.md)."""

    def counting_config(self):
        """A config whose remoteProgram logs each start (each one a remote login shell's) to a file."""
        self.starts = os.path.join(self.work, "starts")
        program = SERVER.remote_wrapper("counting-%s" % os.path.basename(self.work),
                                        '\necho "$1" >> %s' % self.starts)
        return self.config(remoteProgram=program)

    def started(self):
        with open(self.starts) as handle:
            return handle.read().split()

    def control(self):
        return os.path.join(self.runtime_dir, "dsh-sandbox", "ssh")

    def endpoints(self):
        return [os.path.join(self.control(), name) for name in os.listdir(self.control())
                if name.endswith(".service")]

    def master_pid(self):
        for name in os.listdir(self.control()):
            if name.endswith((".service", ".lock")):
                continue
            check = subprocess.run(["ssh", "-F", SERVER.ssh_config, "-o", "ControlPath=" +
                                    os.path.join(self.control(), name), "-O", "check", HOST],
                                   capture_output=True, text=True, timeout=60)
            if "pid=" in check.stderr:
                return int(check.stderr.split("pid=")[1].split(")")[0])
        self.fail("no master")

    def wait_gone(self, pid, what):
        deadline = time.monotonic() + 60
        while os.path.exists("/proc/%d" % pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertFalse(os.path.exists("/proc/%d" % pid), what)

    def test_later_calls_start_no_remote_login_shell(self):
        config = self.counting_config()
        for status in (0, 3, 0, 7):
            result = self.run_remote("sh", "-c", "exit %d" % status, config=config)
            self.assertEqual(result.returncode, status, result.stderr)
        # One start of the remote program, the service's: no call ran a remote-helper of its own.
        self.assertEqual(self.started(), ["remote-service"])
        [endpoint] = self.endpoints()
        self.assertEqual(stat.S_IMODE(os.lstat(endpoint).st_mode) & 0o077, 0)

    def test_two_overlapping_calls_from_two_processes_both_run(self):
        config = self.counting_config()
        self.assertEqual(self.run_remote("true", config=config).returncode, 0)
        # Each waits for the other's file: both finish only if both run at once.
        wait = 'touch "$1"; while [ ! -e "$2" ]; do sleep 0.05; done; echo done'
        first, second = (os.path.join(self.workspace, name) for name in ("first", "second"))
        calls = [subprocess.Popen([DSH_SANDBOX, "run", "--remote", HOST, "--mode", "workspace-write", "--root",
                                   self.workspace, "--", "sh", "-c", wait, "sh", mine, theirs],
                                  stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  env=self.env(config)) for mine, theirs in ((first, second), (second, first))]
        for call in calls:
            out, err = call.communicate(timeout=120)
            self.assertEqual((call.returncode, out), (0, b"done\n"), err)
        self.assertEqual(self.started(), ["remote-service"])

    def test_the_master_killed_mid_call_is_125_and_ends_the_command_and_the_service(self):
        config = self.counting_config()
        self.assertEqual(self.run_remote("true", config=config).returncode, 0)
        process, remote_pid = self.start_waiting_remote(config, stderr=subprocess.PIPE)
        service = service_ancestor(remote_pid)
        self.assertIsNotNone(service, "the command is not served by the remote service")
        os.kill(self.master_pid(), signal.SIGKILL)
        out, err = process.communicate(timeout=120)
        self.assertEqual(process.returncode, 125, err)
        self.assertIn(b"SANDBOX_UNAVAILABLE", err)
        self.wait_gone(remote_pid, "the remote command outlived the connection")
        self.wait_gone(service, "the remote service outlived the connection")
        # A stale endpoint is found out, and the next call starts a new service.
        result = self.run_remote("sh", "-c", "exit 4", config=config)
        self.assertEqual(result.returncode, 4, result.stderr)
        self.assertEqual(self.started(), ["remote-service", "remote-service"])

    def test_a_confined_local_command_cannot_reach_the_endpoint(self):
        self.assertEqual(self.run_remote("true").returncode, 0)
        endpoints = self.endpoints()
        self.assertEqual(len(endpoints), 1)
        marker = os.path.join(self.outside, "reached")
        for backend, mode in ((backend, mode) for backend in ("bwrap", "landlock")
                              for mode in ("read-only", "workspace-write")):
            with self.subTest(backend=backend, mode=mode):
                local = subprocess.run([DSH_SANDBOX, "run", "--backend", backend, "--mode", mode,
                                        "--root", self.workspace, "--", "/usr/bin/python3", "-c", REACH_SERVICE,
                                        marker] + endpoints, capture_output=True, env=self.env(), timeout=120)
                self.assertEqual(local.returncode, 0, local.stderr)
                self.assertIn(b"refused", local.stdout)
                self.assertNotIn(b"connected", local.stdout)
                self.assertFalse(os.path.exists(marker))
        # The endpoint itself still serves this user's calls.
        self.assertEqual(self.run_remote("sh", "-c", "exit 5").returncode, 5)

    def test_a_confined_remote_command_cannot_reach_the_service_socket(self):
        process, remote_pid = self.start_waiting_remote()
        service = service_ancestor(remote_pid)
        process.kill()
        process.wait()
        process.stdout.close()
        # The service's socket, named by its pid in the remote's own control directory.
        sockets = [os.path.join(home, ".cache", "dsh-sandbox", "ssh", "service-%d" % service)
                   for home in (pwd.getpwuid(os.getuid()).pw_dir,)]
        self.assertTrue(stat.S_ISSOCK(os.lstat(sockets[0]).st_mode))
        marker = os.path.join(self.outside, "reached")
        for backend in ("bwrap", "landlock"):
            with self.subTest(backend=backend):
                result = self.dsh("run", "--backend", backend, "--mode", "workspace-write", "--root",
                                  self.workspace, command=["/usr/bin/python3", "-c", REACH_SERVICE, marker] + sockets)
                self.assertEqual(result.returncode, 0, result.stderr)
                self.assertIn(b"refused", result.stdout)
                self.assertNotIn(b"connected", result.stdout)
                self.assertFalse(os.path.exists(marker))

    def test_a_planted_endpoint_is_not_trusted(self):
        # A listener that would answer any call with success, planted where the endpoint goes — as a
        # symlink to it, and as a socket others may use — is never connected to; the call starts its own.
        self.assertEqual(self.run_remote("true").returncode, 0)
        [endpoint] = self.endpoints()
        subprocess.run(["ssh", "-F", SERVER.ssh_config, "-o", "ControlPath=" + os.path.join(self.control(), "%C"),
                        "-O", "exit", HOST], capture_output=True, timeout=60)
        elsewhere = os.path.join(self.work, "liar")
        for plant in ("symlink", "open socket"):
            with self.subTest(plant=plant):
                listener = socket.socket(socket.AF_UNIX)
                if os.path.lexists(endpoint):
                    os.unlink(endpoint)
                if plant == "symlink":
                    listener.bind(elsewhere)
                    os.symlink(elsewhere, endpoint)
                else:
                    listener.bind(endpoint)
                    os.chmod(endpoint, 0o666)
                listener.listen(4)
                listener.settimeout(0)
                result = self.run_remote("sh", "-c", "exit 6")
                self.assertEqual(result.returncode, 6, result.stderr)
                with self.assertRaises(BlockingIOError):
                    listener.accept()
                listener.close()
                if os.path.exists(elsewhere):
                    os.unlink(elsewhere)
                subprocess.run(["ssh", "-F", SERVER.ssh_config, "-o", "ControlPath=" +
                                os.path.join(self.control(), "%C"), "-O", "exit", HOST],
                               capture_output=True, timeout=60)


def command_line_or_none(pid):
    try:
        return command_line(pid)
    except OSError:
        return []


# A confined command that puts a listener of its own where the endpoint argv[1] is, greets as the helper and
# answers the first call with a final record of its choosing (status 0); prints "planted" once listening.
FORGE_ENDPOINT = r'''
import json, os, socket, struct, sys
def frame(kind, payload):
    data = json.dumps(payload).encode()
    return kind.encode() + struct.pack(">I", len(data)) + data
path = sys.argv[1]
os.unlink(path)
listener = socket.socket(socket.AF_UNIX)
os.umask(0o177)
listener.bind(path)
listener.listen(1)
print("planted", flush=True)
peer, _ = listener.accept()
peer.sendall(frame("H", {"protocol": 2, "version": "0.1.0"}))
peer.recv(65536)
peer.sendall(frame("F", {"outcome": "exited", "status": 0}))
peer.close()
'''


class ServiceAttacks(RemoteCase):
    """A hostile command's second look at the remote service: each attack here must fail."""

    counting_config, started, control, endpoints, wait_gone = (
        RemoteService.counting_config, RemoteService.started, RemoteService.control, RemoteService.endpoints,
        RemoteService.wait_gone)

    def test_an_endpoint_made_under_another_runtime_dir_is_out_of_reach_too(self):
        # The user's terminal calls with one XDG_RUNTIME_DIR; an agent started elsewhere (a unit, sudo,
        # cron) confines commands with another, its workspace holding the first (a root such as /run/user,
        # /var/tmp, $HOME).  The runtime protects only the control directory its own XDG_RUNTIME_DIR names
        # and the home one, so the first's endpoint and master lie in a writable root, unprotected: a
        # connect there gives the command a remote call of its own choosing (the master: unconfined).
        root, terminal, endpoint = self.terminal_runtime_dir_inside_a_root()
        control = os.path.dirname(endpoint)
        endpoints = [os.path.join(control, name) for name in os.listdir(control) if name.endswith(".service")]
        masters = [os.path.join(control, name) for name in os.listdir(control)
                   if not name.endswith((".service", ".lock", ".none"))]
        self.assertEqual((len(endpoints), len(masters)), (1, 1))
        for backend in ("bwrap", "landlock"):
            with self.subTest(backend=backend, via="endpoint"):
                # A run request whose workspace is outside the command's root.
                marker = os.path.join(self.outside, "reached-" + backend)
                local = subprocess.run([DSH_SANDBOX, "run", "--backend", backend, "--mode", "workspace-write",
                                        "--root", root, "--", "/usr/bin/python3", "-c", REACH_SERVICE,
                                        marker] + endpoints, capture_output=True, env=self.env(), timeout=120)
                self.assertEqual(local.returncode, 0, local.stderr)
                self.assertNotIn(b"connected", local.stdout)
                self.assertFalse(os.path.exists(marker), "a confined command ran a call of its own choosing")
            with self.subTest(backend=backend, via="master"):
                # ssh's own mux client: the master opens a session, an unconfined command on the remote.
                marker = os.path.join(self.outside, "unconfined-" + backend)
                local = subprocess.run([DSH_SANDBOX, "run", "--backend", backend, "--mode", "workspace-write",
                                        "--root", root, "--", "ssh", "-F", "/dev/null", "-o",
                                        "ControlPath=" + masters[0], "-o", "ControlMaster=no", "any-host",
                                        "touch", marker], capture_output=True, env=self.env(), timeout=120)
                self.assertFalse(os.path.exists(marker), "a confined command ran unconfined on the remote")

    def terminal_runtime_dir_inside_a_root(self):
        """A root (a short path under /var/tmp) holding, as r/, the XDG_RUNTIME_DIR of the user's terminal,
        where a first call made the endpoint and the master.  Returns (root, runtime dir, endpoint)."""
        root = tempfile.mkdtemp(prefix="dshw", dir="/var/tmp")
        self.addCleanup(shutil.rmtree, root, True)
        terminal = os.path.join(root, "r")
        os.mkdir(terminal, 0o700)
        self.addCleanup(SERVER.stop_shared_connections, terminal)
        self.assertEqual(self.run_remote("true", runtime_dir=terminal).returncode, 0)
        control = os.path.join(terminal, "dsh-sandbox", "ssh")
        [endpoint] = [os.path.join(control, name) for name in os.listdir(control) if name.endswith(".service")]
        return root, terminal, endpoint

    def test_an_endpoint_under_another_runtime_dir_cannot_be_replaced_to_forge_a_later_calls_status(self):
        # The same gap, as a plant: the command (confined with its own XDG_RUNTIME_DIR) swaps the endpoint
        # for its own listener; the user's next call greets it and takes its final record.
        for backend in ("bwrap", "landlock"):
            with self.subTest(backend=backend):
                root, terminal, endpoint = self.terminal_runtime_dir_inside_a_root()
                marker = os.path.join(self.workspace, "ran-" + backend)
                confined = subprocess.Popen([DSH_SANDBOX, "run", "--backend", backend, "--mode", "workspace-write",
                                             "--root", root, "--", "/usr/bin/python3", "-c", FORGE_ENDPOINT,
                                             endpoint], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                            stderr=subprocess.PIPE, env=self.env())
                # "planted" once its listener is up; nothing (it exited) when the sandbox refused the swap.
                confined.stdout.readline()
                result = self.run_remote("sh", "-c", 'touch "$1"; exit 3', "sh", marker, runtime_dir=terminal)
                confined.kill()
                confined.communicate(timeout=60)
                self.assertEqual(result.returncode, 3, result.stderr)
                self.assertTrue(os.path.exists(marker), "the call took a final record from the command")

    def test_two_first_calls_at_once_start_one_service_and_both_run(self):
        # Survives: the start is serialized by a flock on <digest>.lock; the second finds the first's endpoint.
        config = self.counting_config()
        calls = [subprocess.Popen([DSH_SANDBOX, "run", "--remote", HOST, "--mode", "workspace-write", "--root",
                                   self.workspace, "--", "sh", "-c", "exit %d" % status],
                                  stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  env=self.env(config)) for status in (3, 4)]
        for call, status in zip(calls, (3, 4)):
            _, err = call.communicate(timeout=120)
            self.assertEqual(call.returncode, status, err)
        self.assertEqual(self.started(), ["remote-service"])

    def test_a_start_lock_held_elsewhere_sends_the_call_to_a_session_of_its_own(self):
        # A first caller stopped mid-start (Ctrl-Z) holds <digest>.lock: a later call that finds no live
        # endpoint must neither hang nor start a second service; it runs by the per-call session, every
        # check kept.  (No duration asserted: the lock is tried until the start deadline.)
        config = self.counting_config()
        self.assertEqual(self.run_remote("true", config=config).returncode, 0)
        SERVER.stop_shared_connections(self.runtime_dir)   # the endpoint is stale now: a start is due
        locks = [open(os.path.join(self.control(), name), "r+") for name in os.listdir(self.control())
                 if name.endswith(".lock")]
        self.assertTrue(locks)
        for lock in locks:
            fcntl.flock(lock, fcntl.LOCK_EX)
            self.addCleanup(lock.close)
        result = self.run_remote("sh", "-c", "exit 7", config=config)
        self.assertEqual(result.returncode, 7, result.stderr)
        self.assertEqual(self.started(), ["remote-service", "remote-helper"])

    def test_the_registry_of_control_directories_is_out_of_reach_of_a_confined_command(self):
        # Every runtime protects every control directory the registry names: a command that could empty
        # it (or rename it away) would unprotect the next sandbox's view of another runtime dir's master.
        root, terminal, endpoint = self.terminal_runtime_dir_inside_a_root()
        home = pwd.getpwuid(os.geteuid()).pw_dir
        registry = os.path.join(home, ".cache", "dsh-sandbox", "registry", "control-directories")
        with open(registry) as handle:
            self.assertIn(os.path.realpath(os.path.dirname(endpoint)) + "\n", handle.read())
        tamper = ('for f in "$1" "$1.new"; do true > "$f"; done; mv "$1" "$1.gone"; '
                  'rm -rf "$(dirname "$1")"; mv "$(dirname "$1")" "$(dirname "$1").gone"; '
                  'd=$(dirname "$(dirname "$1")"); mv "$d" "$d.gone" && mkdir -p "$d/registry" && '
                  'true > "$d/registry/control-directories"; true')
        for backend in ("bwrap", "landlock"):
            with self.subTest(backend=backend):
                before = os.stat(registry)
                local = subprocess.run([DSH_SANDBOX, "run", "--backend", backend, "--mode", "workspace-write",
                                        "--root", os.path.join(home, ".cache"), "--", "sh", "-c", tamper, "sh",
                                        registry], capture_output=True, env=self.env(), timeout=120)
                self.assertEqual(local.returncode, 0, local.stderr)
                after = os.stat(registry)
                self.assertEqual((before.st_ino, before.st_size, before.st_mtime_ns),
                                 (after.st_ino, after.st_size, after.st_mtime_ns), "the command changed the registry")
                self.assertFalse(os.path.exists(registry + ".gone"))
                self.assertFalse(os.path.exists(os.path.dirname(os.path.dirname(registry)) + ".gone"))

    def test_the_remote_command_ends_when_the_local_caller_is_killed_on_either_backend(self):
        # Survives: the caller's socket end closes the channel, sshd closes the helper's socket, and the helper
        # kills its command (the service only ever kills whole process groups on top of that).
        config = self.counting_config()
        self.assertEqual(self.run_remote("true", config=config).returncode, 0)
        for backend in ("bwrap", "landlock"):
            with self.subTest(backend=backend):
                duration = "1000.%d" % os.getpid()   # its own: other sleeps may run on this machine
                process = subprocess.Popen([DSH_SANDBOX, "run", "--remote", HOST, "--backend", backend, "--mode",
                                            "workspace-write", "--root", self.workspace, "--", "sh", "-c",
                                            'echo ready; exec sleep "$1"', "sh", duration],
                                           stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, env=self.env(config))
                self.assertEqual(process.stdout.readline(), b"ready\n")
                # Under bwrap $$ is the command's pid in its own namespace: found by its own command line,
                # once the shell that said "ready" has exec'd it.
                deadline = time.monotonic() + 60
                sleepers = []
                while not sleepers and time.monotonic() < deadline:
                    sleepers = [int(p) for p in os.listdir("/proc") if p.isdigit() and
                                command_line_or_none(p)[:2] == [b"sleep", duration.encode()]]
                process.kill()
                process.wait()
                process.stdout.close()
                self.assertEqual(len(sleepers), 1, "the command was not found")
                for pid in sleepers:
                    self.wait_gone(pid, "the remote command outlived its caller")
        self.assertEqual(self.started(), ["remote-service"])


    def test_a_destination_the_ssh_config_repoints_is_not_reached_through_the_old_endpoint(self):
        # The endpoint is named by the destination as written, ssh's master by %C (the host, port and
        # user ssh resolved): once the user's ssh config sends the name elsewhere (here: to a closed
        # port), ssh alone would go there, but the old endpoint still forwards to the old host — until
        # the service idles out, 10 minutes after the last call.
        own_config = os.path.join(self.work, "own_ssh_config")
        with open(SERVER.ssh_config) as handle:
            text = handle.read()
        with open(own_config, "w") as handle:
            handle.write(text)
        config = self.config(sshCommand=["ssh", "-F", own_config])
        self.assertEqual(self.run_remote("true", config=config).returncode, 0)
        port = next(line.split()[1] for line in text.splitlines() if line.strip().startswith("Port "))
        with open(own_config, "w") as handle:
            handle.write(text.replace("Port %s\n" % port, "Port 1\n", 1))
        marker = os.path.join(self.workspace, "ran-on-the-old-host")
        result = self.run_remote("touch", marker, config=config)
        self.assertEqual(result.returncode, 125, result.stderr)
        self.assertFalse(os.path.exists(marker), "the call ran on the host the config no longer names")

if __name__ == "__main__":
    # Verbose on stdout, one line per case, as scripts/count-tests.py counts them.
    runner = unittest.TextTestRunner(stream=sys.stdout, verbosity=2, descriptions=False)
    outcome = unittest.main(testRunner=runner, exit=False).result
    if SERVER is None and outcome.wasSuccessful():
        sys.exit(77)   # skipped, with the reason printed: meson reports SKIP
    sys.exit(0 if outcome.wasSuccessful() else 1)
