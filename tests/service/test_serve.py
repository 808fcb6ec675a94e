#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`dsh-sandbox serve` driven by a JSON-RPC client, as a harness would drive it.

Each case starts a real `dsh-sandbox serve` (the built one: $DSH_SANDBOX_BIN)
with a state directory and config of its own under $DSH_TEST_SCRATCH, sends
requests on its stdin, reads answers (and the server's own approval/request
requests) on its stdout, and checks the disk and /proc for what the service
claims.  No assertion depends on timing: concurrency is shown by the order of
answers, with a command held back by a gate file the test creates.

Output is unittest's verbose form on stdout, one line per case
("test_name (test_serve.Class.test_name) ... ok"), which scripts/count-tests.py counts.
"""
import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import uuid

BIN = os.environ.get("DSH_SANDBOX_BIN", "")
SCRATCH = os.environ.get("DSH_TEST_SCRATCH", "/var/tmp/dsh-sandbox-tests")
# An upper bound on any one wait, so a broken server fails the case instead of hanging it.  Never a
# measurement: every case waits for an event (an answer, a file, a process gone), not for a time.
PATIENCE = 60.0

REJECTED = ('the user rejected escalating this command to "workspace-write"; it stays denied, so stop and '
            "explain instead of working around it")


def bwrap_works():
    """Whether bwrap can make a sandbox on this host (a user namespace, a fresh /proc)."""
    if not os.path.exists("/usr/bin/bwrap"):
        return False
    probe = subprocess.run(["/usr/bin/bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--unshare-pid", "--proc",
                            "/proc", "--", "true"], capture_output=True, check=False)
    return probe.returncode == 0


BWRAP = bwrap_works()


def default_stopping_signals():
    for number in (signal.SIGHUP, signal.SIGINT, signal.SIGTERM):
        signal.signal(number, signal.SIG_DFL)


def wait_until(predicate, what):
    """Waits for `predicate()` to hold (an event), failing after PATIENCE."""
    deadline = time.monotonic() + PATIENCE
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(0.02)


def processes_with(marker, program=None):
    """Pids whose command line holds `marker` (and, with `program`, whose argv[0] is `program`)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                argv = handle.read().split(b"\0")
        except OSError:
            continue
        if marker.encode() in b" ".join(argv) and (program is None or argv[0] == program.encode()):
            found.append(int(entry))
    return found


class RpcError(Exception):
    def __init__(self, error):
        super().__init__(f"{error.get('code')}: {error.get('message')}")
        self.error = error
        self.code = error.get("code")
        self.data = error.get("data")


class Server:
    """One `dsh-sandbox serve` and the client side of its protocol."""

    def __init__(self, home, config=None, approve=None, arguments=()):
        self.home = home
        config_path = os.path.join(home, "config.json")
        with open(config_path, "w", encoding="utf-8") as handle:
            json.dump(config or {}, handle)
        env = dict(os.environ)
        env.update({"DSH_SANDBOX_STATE_DIR": os.path.join(home, "state"),
                    "XDG_CACHE_HOME": os.path.join(home, "cache"),
                    "XDG_CONFIG_HOME": os.path.join(home, "config")})
        env.pop("DSH_SANDBOX_CONFIG", None)
        # SIGINT, SIGTERM and SIGHUP at their defaults whatever the suite was started under (a background
        # job of a non-interactive shell ignores SIGINT, nohup SIGHUP): serve keeps an ignored one ignored.
        self.process = subprocess.Popen([BIN, "serve", "--config", config_path, *arguments], stdin=subprocess.PIPE,
                                        preexec_fn=default_stopping_signals,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=home, env=env)
        # approve(params) -> the answer to approval/request: a result dict, or ("error", {...}), or None (never answer)
        self.approve = approve
        self.approvals = []
        self.answers = {}
        self.order = []
        self.changed = threading.Condition()
        self.next_id = 0
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.process.stdout:
            message = json.loads(line)
            if "method" in message and "id" in message:
                self._answer_request(message)
                continue
            with self.changed:
                self.answers[message.get("id")] = message
                self.order.append(message.get("id"))
                self.changed.notify_all()

    def _answer_request(self, message):
        self.approvals.append(message)
        answer = self.approve(message.get("params")) if self.approve else {"approved": False}
        if answer is None:
            return
        if isinstance(answer, tuple):
            self.send({"jsonrpc": "2.0", "id": message["id"], "error": answer[1]})
        else:
            self.send({"jsonrpc": "2.0", "id": message["id"], "result": answer})

    def send(self, message):
        data = message if isinstance(message, bytes) else json.dumps(message).encode()
        self.process.stdin.write(data + b"\n")
        self.process.stdin.flush()

    def request(self, method, params=None):
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return self.next_id

    def answer(self, request_id):
        with self.changed:
            if not self.changed.wait_for(lambda: request_id in self.answers, timeout=PATIENCE):
                raise AssertionError(f"no answer to request {request_id!r}")
            return self.answers[request_id]

    def result(self, request_id):
        message = self.answer(request_id)
        if "error" in message:
            raise RpcError(message["error"])
        return message["result"]

    def call(self, method, params=None):
        return self.result(self.request(method, params))

    def error(self, method, params=None):
        message = self.answer(self.request(method, params))
        if "error" not in message:
            raise AssertionError(f"{method} succeeded: {message['result']!r}")
        return message["error"]

    def close(self):
        """Ends the input; returns the exit status (its stderr is kept in self.log)."""
        if not self.process.stdin.closed:
            self.process.stdin.close()
        self.log = self.process.stderr.read().decode(errors="replace")
        try:
            return self.process.wait(timeout=PATIENCE)
        finally:
            self.reader.join(timeout=PATIENCE)
            self.process.stderr.close()

    def kill(self):
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


class ServeCase(unittest.TestCase):
    config = None

    def setUp(self):
        os.makedirs(SCRATCH, exist_ok=True)
        self.home = tempfile.mkdtemp(prefix="serve-", dir=SCRATCH)
        self.workspace = os.path.join(self.home, "workspace")
        self.outside = os.path.join(self.home, "outside")
        os.makedirs(self.workspace)
        os.makedirs(self.outside)
        self.servers = []

    def tearDown(self):
        # Every server ends as a harness ends it, at end of input, and must exit 0 with nothing on
        # stderr: a sanitizer build reports leaks and memory errors there, and in the status.
        try:
            for server in self.servers:
                if server.process.returncode is None:
                    status = server.close()
                    self.assertEqual((status, server.log), (0, ""))
        finally:
            for server in self.servers:
                server.kill()
                server.process.stdout.close()
            shutil.rmtree(self.home, ignore_errors=True)

    def serve(self, approve=None, config=None, arguments=()):
        server = Server(self.home, config if config is not None else self.config, approve, arguments)
        self.servers.append(server)
        return server

    def workspace_policy(self, **extra):
        policy = {"mode": "workspace-write", "root": self.workspace}
        policy.update(extra)
        return policy

    def path(self, *parts):
        return os.path.join(self.workspace, *parts)


class ProtocolTest(ServeCase):
    def test_parse_error_then_valid_request(self):
        server = self.serve()
        server.send(b"{this is not json")
        with server.changed:
            server.changed.wait_for(lambda: None in server.answers, timeout=PATIENCE)
        error = server.answers[None]
        self.assertEqual(error["id"], None)
        self.assertEqual(error["error"]["code"], -32700)
        result = server.call("policy.resolve", {"mode": "read-only", "root": self.workspace})
        self.assertEqual(result, {"mode": "read-only", "workspaceRoot": self.workspace})
        self.assertEqual(server.close(), 0)

    def test_invalid_request_and_bad_lines_do_not_end_the_server(self):
        server = self.serve()
        server.send({"jsonrpc": "2.0", "id": "x1", "method": 42})
        self.assertEqual(server.answer("x1")["error"]["code"], -32600)
        server.send({"jsonrpc": "1.0", "id": "x2", "method": "policy.resolve"})
        self.assertEqual(server.answer("x2")["error"]["code"], -32600)
        server.send(b"[1, 2]")
        server.send(b"\xff\xfe garbage")
        self.assertEqual(server.call("policy.resolve", {"mode": "read-only", "root": self.workspace})["mode"],
                         "read-only")

    def test_unknown_method(self):
        server = self.serve()
        error = server.error("policy.dissolve", {})
        self.assertEqual(error["code"], -32601)
        self.assertIn("policy.dissolve", error["message"])

    def test_invalid_params_name_the_parameter(self):
        server = self.serve()
        cases = [
            ("policy.resolve", {"mode": "sideways"}, "mode"),
            ("policy.resolve", {"sesionId": "x"}, "sesionId"),
            ("policy.resolve", {"allowWrite": "/tmp"}, "allowWrite"),
            ("policy.resolve", {"backend": "chroot"}, "backend"),
            ("bash.run", {"mode": "read-only"}, "command"),
            ("bash.run", {"command": "true", "timeoutMs": 0}, "timeoutMs"),
            ("bash.run", {"command": "true", "sandboxPermissions": "root"}, "sandboxPermissions"),
            ("fs.write", {"path": "f"}, "content"),
            ("job.read", {"jobId": "one"}, "jobId"),
            ("job.read", {"jobId": 4242}, "jobId"),
            ("session.unregisterWritableRoot", {"registrationId": 99}, "registrationId"),
            ("session.create", {}, "cwd"),
            # A job escalates as bash.run does (approved from its thread): a mode that is none is its bad param.
            ("job.start", {"command": "true", "sandboxPermissions": "root"}, "sandboxPermissions"),
            ("bash.run", {"command": "true", "additionalWrite": "/tmp"}, "additionalWrite"),
            ("job.start", {"command": "true", "additionalHosts": [1]}, "additionalHosts"),
        ]
        for method, params, parameter in cases:
            with self.subTest(method=method, params=params):
                error = server.error(method, params)
                self.assertEqual(error["code"], -32602, error)
                self.assertEqual(error["data"], {"parameter": parameter})
                self.assertIn(parameter, error["message"])

    def test_sandbox_error_carries_code_and_exact_text(self):
        server = self.serve()
        target = self.path("denied.txt")
        error = server.error("fs.write", {"mode": "read-only", "root": self.workspace, "path": target,
                                          "content": "no"})
        message = f'cannot write "{target}": file access denied under read-only mode'
        self.assertEqual(error["code"], -32000)
        self.assertEqual(error["data"]["code"], "FS_SANDBOX_DENIED")
        self.assertEqual(error["data"]["message"], message)
        self.assertEqual(error["message"], message)
        self.assertFalse(os.path.exists(target))

    def test_two_requests_in_flight(self):
        """A slow bash.run does not hold up a policy.resolve sent after it."""
        server = self.serve()
        gate = self.path("gate")
        slow = server.request("bash.run", self.workspace_policy(
            command=f"while [ ! -e '{gate}' ]; do sleep 0.02; done; echo released"))
        quick = server.request("policy.resolve", {"mode": "read-only", "root": self.workspace})
        self.assertEqual(server.result(quick)["mode"], "read-only")
        # The slow one cannot have answered: its gate does not exist yet.
        self.assertNotIn(slow, server.answers)
        open(gate, "w", encoding="utf-8").close()
        self.assertEqual(server.result(slow)["stdout"]["text"], "released\n")
        self.assertLess(server.order.index(quick), server.order.index(slow))

    def test_cancel_a_running_bash_run(self):
        server = self.serve()
        started = self.path("started")
        request = server.request("bash.run", self.workspace_policy(command=f"touch '{started}'; exec sleep 600"))
        wait_until(lambda: os.path.exists(started), "the command to start")
        server.send({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": request}})
        result = server.result(request)
        self.assertEqual(result["kind"], "cancelled")
        self.assertTrue(result["cancelled"])
        # An unknown or finished id is ignored, and the server goes on.
        server.send({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": request}})
        server.send({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": "never-sent"}})
        self.assertEqual(server.call("policy.resolve", {"mode": "read-only", "root": self.workspace})["mode"],
                         "read-only")

    def test_end_of_input_waits_for_requests_in_flight(self):
        server = self.serve()
        gate = self.path("gate")
        request = server.request("bash.run", self.workspace_policy(
            command=f"while [ ! -e '{gate}' ]; do sleep 0.02; done; echo done"))
        server.process.stdin.close()
        self.assertIsNone(server.process.poll())
        open(gate, "w", encoding="utf-8").close()
        self.assertEqual(server.result(request)["stdout"]["text"], "done\n")
        self.assertEqual(server.close(), 0)


class SessionTest(ServeCase):
    def test_session_create_set_mode_get_and_context(self):
        server = self.serve()
        session = server.call("session.create", {"cwd": self.workspace})["sessionId"]
        resolved = server.call("policy.resolve", {"sessionId": session})
        self.assertEqual(resolved, {"mode": "read-only", "workspaceRoot": self.workspace, "sessionId": session})
        first = server.call("policy.context", {"sessionId": session})["text"]
        self.assertTrue(first.startswith("Current DSH file policy: read-only."), first)
        self.assertIsNone(server.call("policy.context", {"sessionId": session})["text"])

        self.assertEqual(server.call("session.setMode", {"sessionId": session, "mode": "workspace-write"}), {})
        shown = server.call("session.get", {"sessionId": session})
        self.assertEqual(shown["header"]["id"], session)
        self.assertEqual(shown["header"]["cwd"], self.workspace)
        self.assertEqual(shown["effectiveMode"], "workspace-write")
        modes = [event for event in shown["events"] if event["type"] == "sandbox/mode"]
        self.assertEqual([event["data"]["mode"] for event in modes], ["workspace-write"])
        context = server.call("policy.context", {"sessionId": session})["text"]
        self.assertEqual(context, "Current DSH file policy: workspace-write. Any available operation enforced by "
                         "the DSH file sandbox may modify files under the session workspace: "
                         f"\"{self.workspace}\". Some platform temporary areas may also be writable.")
        self.assertEqual(server.call("policy.resolve", {"sessionId": session})["mode"], "workspace-write")

        child = server.call("session.create", {"cwd": self.workspace, "parentId": session})["sessionId"]
        self.assertEqual(server.call("session.get", {"sessionId": child})["effectiveMode"], "workspace-write")

    def test_unknown_session_is_a_sandbox_error(self):
        server = self.serve()
        error = server.error("session.get", {"sessionId": "no-such-session"})
        self.assertEqual(error["code"], -32000)
        self.assertIn("no-such-session", error["data"]["message"])

    def test_registered_root_allows_writes_until_unregistered(self):
        server = self.serve()
        session = server.call("session.create", {"cwd": self.workspace})["sessionId"]
        server.call("session.setMode", {"sessionId": session, "mode": "workspace-write"})
        before, during, after = (os.path.join(self.outside, name) for name in ("before", "during", "after"))

        error = server.error("fs.write", {"sessionId": session, "path": before, "content": "x"})
        self.assertEqual(error["data"]["code"], "FS_SANDBOX_DENIED")
        self.assertEqual(server.call("bash.run", {"sessionId": session, "command": f"echo x > '{before}'"})["kind"],
                         "denied")
        self.assertFalse(os.path.exists(before))

        registration = server.call("session.registerWritableRoot",
                                   {"sessionId": session, "path": self.outside})["registrationId"]
        self.assertIn(self.outside, server.call("policy.resolve", {"sessionId": session})["additionalWritableRoots"])
        server.call("fs.write", {"sessionId": session, "path": during, "content": "by the guard"})
        result = server.call("bash.run", {"sessionId": session, "command": f"echo by bash >> '{during}'"})
        self.assertEqual(result["kind"], "completed", result)
        with open(during, encoding="utf-8") as handle:
            self.assertEqual(handle.read(), "by the guardby bash\n")

        self.assertEqual(server.call("session.unregisterWritableRoot", {"registrationId": registration}), {})
        self.assertNotIn("additionalWritableRoots", server.call("policy.resolve", {"sessionId": session}))
        error = server.error("fs.write", {"sessionId": session, "path": after, "content": "x"})
        self.assertEqual(error["data"]["code"], "FS_SANDBOX_DENIED")
        self.assertEqual(server.call("bash.run", {"sessionId": session, "command": f"echo x > '{after}'"})["kind"],
                         "denied")
        self.assertFalse(os.path.exists(after))
        # Removed once: a second removal names the id.
        error = server.error("session.unregisterWritableRoot", {"registrationId": registration})
        self.assertEqual(error["data"], {"parameter": "registrationId"})


    def test_a_registered_root_does_not_reach_the_sandbox_own_files(self):
        """The harness may widen a session, but the runtime's shield still holds: the config in use
        and the session store stay out of reach of every confined call, through the service too."""
        server = self.serve()
        session = server.call("session.create", {"cwd": self.workspace})["sessionId"]
        server.call("session.setMode", {"sessionId": session, "mode": "workspace-write"})
        # The service's home holds its config.json and its state directory (the session logs).
        server.call("session.registerWritableRoot", {"sessionId": session, "path": self.home})
        config = os.path.join(self.home, "config.json")
        log = os.path.join(self.home, "state", f"{session}.jsonl")
        with open(config, "rb") as handle:
            config_before = handle.read()
        with open(log, "rb") as handle:
            log_before = handle.read()
        error = server.error("fs.write", {"sessionId": session, "path": config,
                                          "content": '{"mode": "danger-full-access"}'})
        self.assertEqual(error["data"]["code"], "FS_SANDBOX_DENIED")
        forge = (f"echo '{{\"mode\":\"danger-full-access\"}}' > '{config}'; "
                 f"echo '{{\"type\":\"sandbox/mode\",\"seq\":99,\"time\":1,\"data\":{{\"mode\":\"danger-full-access\"}}}}' >> '{log}'")
        for backend in (["bwrap", "landlock"] if BWRAP else ["landlock"]):
            with self.subTest(backend=backend):
                answer = server.answer(server.request("bash.run", {"sessionId": session, "backend": backend,
                                                                   "command": forge}))
                if "result" in answer:
                    self.assertNotEqual(answer["result"]["kind"], "completed", answer["result"])
                else:
                    self.assertEqual(answer["error"]["code"], -32000)
                with open(config, "rb") as handle:
                    self.assertEqual(handle.read(), config_before)
                with open(log, "rb") as handle:
                    self.assertEqual(handle.read(), log_before)
        self.assertEqual(server.call("session.get", {"sessionId": session})["effectiveMode"], "workspace-write")


class ConfineTest(ServeCase):
    def test_sandbox_confine_returns_the_facts(self):
        server = self.serve()
        facts = server.call("sandbox.confine", self.workspace_policy(argv=["make", "-j4"], backend="landlock"))
        self.assertEqual(facts["backend"], "landlock")
        self.assertEqual(facts["argv"][-3:], ["--", "make", "-j4"])
        self.assertEqual(facts["denialSignatures"], ["permission denied"])
        self.assertEqual(facts["runnerFailureRules"][0]["allowedExitCodes"], [125])
        self.assertIn(facts["enforcement"], ("full", "partial"))
        error = server.error("sandbox.confine", {"mode": "danger-full-access", "argv": ["true"]})
        self.assertEqual(error["data"], {"parameter": "mode"})
        error = server.error("sandbox.confine", {"mode": "read-only", "argv": []})
        self.assertEqual(error["code"], -32602)

    def test_sandbox_probe_reports_every_backend(self):
        server = self.serve()
        report = server.call("sandbox.probe")
        self.assertEqual(sorted(backend["name"] for backend in report["backends"]), ["bwrap", "landlock"])
        self.assertIn(report["selected"], ("bwrap", "landlock"))
        self.assertEqual(server.call("sandbox.probe", {"backend": "landlock"})["selected"], "landlock")


class NetworkParamsTest(ServeCase):
    """`network` in the policy params: the config's shape, checked by the library's own decoder."""

    def test_network_is_read_in_the_config_shape(self):
        server = self.serve()
        base = {"mode": "read-only", "root": self.workspace}
        self.assertNotIn("network", server.call("policy.resolve", base))
        self.assertEqual(server.call("policy.resolve", dict(base, network="off"))["network"], "off")
        self.assertNotIn("network", server.call("policy.resolve", dict(base, network="on")))
        allow = {"allowHosts": ["@npm", "Example.com:443"], "allowLocalPorts": [5432], "dnsUpstream": "127.0.0.1:53"}
        self.assertEqual(server.call("policy.resolve", dict(base, network=allow))["network"], allow)
        # An object without hosts is off with its local ports.
        ports = {"allowLocalPorts": [8080]}
        self.assertEqual(server.call("policy.resolve", dict(base, network=ports))["network"], ports)

    def test_bad_network_is_invalid_params_naming_the_entry(self):
        server = self.serve()
        cases = [
            ("maybe", 'must be "on", "off" or'),
            (7, 'must be "on", "off" or'),
            ({"allowHosts": ["example.com", "*"]}, '"allowHosts"[1] "*": a pattern must name a domain'),
            ({"allowHosts": ["https://example.com"]}, '"allowHosts"[0] "https://example.com": a pattern names a '
                                                      'host, not a URL'),
            ({"allowHosts": ["com"]}, '"allowHosts"[0] "com": '),
            ({"allowHosts": ["@nope"]}, "unknown named set"),
            ({"allowHosts": "example.com"}, '"allowHosts" must be an array'),
            ({"allowHosts": ["example.com"], "allowAll": True}, '"allowAll" is an unknown key'),
            ({"allowLocalPorts": [0]}, '"allowLocalPorts"[0] must be a port'),
            ({"allowLocalPorts": [65536]}, '"allowLocalPorts"[0] must be a port'),
            ({"allowLocalPorts": ["80"]}, '"allowLocalPorts"[0] must be a port'),
            ({"allowHosts": ["a.example"], "dnsUpstream": "dns.example:53"}, '"dnsUpstream" must be IPV4:PORT'),
        ]
        for network, said in cases:
            with self.subTest(network=network):
                error = server.error("policy.resolve", {"mode": "read-only", "root": self.workspace,
                                                        "network": network})
                self.assertEqual(error["code"], -32602, error)
                self.assertEqual(error["data"], {"parameter": "network"})
                self.assertTrue(error["message"].startswith("invalid params: network: "), error["message"])
                self.assertIn(said, error["message"])

    def test_bash_run_refuses_a_network_under_danger_full_access(self):
        server = self.serve()
        marker = self.path("ran")
        result = server.call("bash.run", {"mode": "danger-full-access", "root": self.workspace, "network": "off",
                                          "command": f"touch '{marker}'"})
        # The bash tool's own shape for a call the sandbox could not run: a result, never a run.
        self.assertEqual(result["kind"], "runner-failed")
        self.assertEqual(result["error"], {"code": "SANDBOX_UNAVAILABLE",
                                           "message": "danger-full-access confines nothing, so no network policy can "
                                                      "be held; use read-only or workspace-write"})
        self.assertFalse(os.path.exists(marker))


class SecretsParamsTest(ServeCase):
    """`maskedPaths` and `allowEnvironment` in the policy params, checked by the library's own checks."""

    def test_secrets_params_reach_the_policy(self):
        server = self.serve()
        base = {"mode": "read-only", "root": self.workspace}
        resolved = server.call("policy.resolve", base)
        self.assertNotIn("maskedPaths", resolved)
        self.assertNotIn("allowEnvironment", resolved)
        resolved = server.call("policy.resolve", dict(base, maskedPaths=[".aws", "~/.ssh/id_*", ".aws"],
                                                      allowEnvironment=["GITHUB_TOKEN"]))
        self.assertEqual(resolved["maskedPaths"], [".aws", "~/.ssh/id_*"])
        self.assertEqual(resolved["allowEnvironment"], ["GITHUB_TOKEN"])

    def test_bad_secrets_params_are_invalid_params_naming_the_entry(self):
        server = self.serve()
        cases = [
            ("maskedPaths", ["a/../b"], '"a/../b": an entry may not hold a "." or ".." component'),
            ("maskedPaths", [".ssh/*/id"], '".ssh/*/id": a wildcard may only stand in the last component'),
            ("maskedPaths", ["/"], '"/": an entry may not mask "/" or a whole home'),
            ("maskedPaths", ".aws", "expected an array of strings"),
            ("allowEnvironment", ["*_TOKEN"], '"*_TOKEN": a variable name may hold only letters, digits and "_"'),
            ("allowEnvironment", ["A=B"], '"A=B": a variable name may hold only'),
            ("allowEnvironment", [7], "element 0"),
        ]
        for name, value, said in cases:
            with self.subTest(name=name, value=value):
                error = server.error("policy.resolve", {"mode": "read-only", "root": self.workspace, name: value})
                self.assertEqual(error["code"], -32602, error)
                self.assertEqual(error["data"], {"parameter": name})
                self.assertTrue(error["message"].startswith(f"invalid params: {name}: "), error["message"])
                self.assertIn(said, error["message"])
        # bash.run reads the same params: a bad one is refused before anything runs.
        marker = self.path("ran")
        error = server.error("bash.run", {"mode": "read-only", "root": self.workspace, "maskedPaths": ["a/.."],
                                          "command": f"touch '{marker}'"})
        self.assertEqual(error["code"], -32602, error)
        self.assertEqual(error["data"], {"parameter": "maskedPaths"})
        self.assertFalse(os.path.exists(marker))


class ConfiguredSecretsTest(ServeCase):
    config = {"maskedPaths": [".aws", "/srv/keys/*.pem"], "requireMasks": True,
              "environment": {"deny": ["*_TOKEN"], "allow": ["GH_TOKEN"]}}

    def test_probe_reports_the_configured_secrets(self):
        report = self.serve().call("sandbox.probe")
        self.assertEqual(report["secrets"], {"maskedPaths": [".aws", "/srv/keys/*.pem"], "requireMasks": True,
                                             "environmentDeny": ["*_TOKEN"], "environmentAllow": ["GH_TOKEN"]})

    def test_a_bad_config_entry_is_refused_at_start(self):
        path = os.path.join(self.home, "bad-secrets.json")
        with open(path, "w", encoding="utf-8") as config:
            json.dump({"environment": {"allow": ["*_TOKEN"]}}, config)
        refused = subprocess.run([BIN, "serve", "--config", path], input=b"", capture_output=True, check=False)
        self.assertEqual(refused.returncode, 2)
        self.assertIn(b'key "environment.allow": "*_TOKEN": a variable name may hold only', refused.stderr)
        self.assertEqual(refused.stdout, b"")


class ConfiguredNetworkTest(ServeCase):
    config = {"network": {"allowHosts": ["@github"], "allowLocalPorts": [5432]}}

    def test_the_config_network_is_the_default_and_a_call_replaces_it_whole(self):
        server = self.serve()
        base = {"mode": "read-only", "root": self.workspace}
        self.assertEqual(server.call("policy.resolve", base)["network"], self.config["network"])
        # The call's own network replaces the config's: never merged with it.
        self.assertEqual(server.call("policy.resolve", dict(base, network={"allowHosts": ["a.example"]}))["network"],
                         {"allowHosts": ["a.example"]})
        self.assertNotIn("network", server.call("policy.resolve", dict(base, network="on")))

    def test_a_bad_config_network_is_refused_at_start(self):
        refused = subprocess.run([BIN, "serve", "--config", self.write_config({"network": {"allowHosts": ["*"]}})],
                                 input=b"", capture_output=True, check=False)
        self.assertEqual(refused.returncode, 2)
        self.assertIn(b'key "network": "allowHosts"[0] "*": a pattern must name a domain', refused.stderr)
        self.assertEqual(refused.stdout, b"")

    def write_config(self, config):
        path = os.path.join(self.home, "bad-config.json")
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(config, handle)
        return path


class BashTest(ServeCase):
    def backends(self):
        return ["bwrap", "landlock"] if BWRAP else ["landlock"]

    def test_denied_write_under_read_only_on_disk(self):
        server = self.serve()
        for backend in self.backends():
            with self.subTest(backend=backend):
                target = self.path(f"denied-{backend}")
                result = server.call("bash.run", {"mode": "read-only", "root": self.workspace, "backend": backend,
                                                  "command": f"echo no > '{target}'"})
                self.assertEqual(result["kind"], "denied")
                self.assertEqual(result["sandbox"]["backend"], backend)
                self.assertIn("[sandbox: file access denied under read-only mode]", result["markers"])
                self.assertFalse(os.path.exists(target))

    def test_write_allowed_under_workspace_write(self):
        server = self.serve()
        target = self.path("allowed")
        result = server.call("bash.run", self.workspace_policy(command=f"echo yes > '{target}'; echo out"))
        self.assertEqual(result["kind"], "completed")
        self.assertEqual(result["exitCode"], 0)
        self.assertEqual(result["stdout"]["text"], "out\n")
        with open(target, encoding="utf-8") as handle:
            self.assertEqual(handle.read(), "yes\n")

    def escalation(self, target, justification="the test writes its marker file"):
        """bash.run's params: write `target` under read-only, asking for workspace-write."""
        return {"mode": "read-only", "root": self.workspace, "command": f"echo escalated > '{target}'",
                "sandboxPermissions": "workspace-write", "justification": justification}

    def escalate(self, server, target):
        return server.call("bash.run", self.escalation(target))

    def test_approval_yes_lands_the_write(self):
        server = self.serve(approve=lambda params: {"approved": True})
        target = self.path("approved")
        result = self.escalate(server, target)
        self.assertEqual(result["kind"], "completed", result)
        self.assertEqual(result["sandbox"]["mode"], "workspace-write")
        self.assertTrue(os.path.exists(target))
        self.assertEqual(len(server.approvals), 1)
        params = server.approvals[0]["params"]
        self.assertEqual(params["command"], self.escalation(target)["command"])
        self.assertEqual(params["mode"], "workspace-write")
        self.assertEqual(params["justification"], "the test writes its marker file")

    def test_approval_no_rejects_and_writes_nothing(self):
        answers = {"declined": lambda params: {"approved": False},
                   "an error": lambda params: ("error", {"code": -1, "message": "the user closed the prompt"}),
                   "not true": lambda params: {"approved": "yes"}}
        for name, approve in answers.items():
            with self.subTest(answer=name):
                server = self.serve(approve=approve)
                target = self.path(f"rejected-{name.replace(' ', '-')}")
                result = self.escalate(server, target)
                self.assertEqual(result["kind"], "rejected")
                self.assertEqual(result["message"], REJECTED)
                self.assertFalse(os.path.exists(target))
                self.assertEqual(server.close(), 0)

    def test_approval_never_answered_is_a_rejection(self):
        server = self.serve(approve=lambda params: None, arguments=["--approval-timeout", "1"])
        target = self.path("unanswered")
        result = server.call("bash.run", self.escalation(target, "the test never answers"))
        self.assertEqual(len(server.approvals), 1)
        self.assertEqual(result["kind"], "rejected")
        self.assertEqual(result["message"], REJECTED)
        self.assertTrue(any("did not answer approval/request" in warning for warning in result["warnings"]), result)
        self.assertFalse(os.path.exists(target))

    def test_cancelled_while_approval_is_awaited_runs_nothing(self):
        server = self.serve(approve=lambda params: None)
        target = self.path("cancelled")
        request = server.request("bash.run", self.escalation(target, "the test cancels before answering"))
        wait_until(lambda: server.approvals, "approval/request")
        server.send({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": request}})
        result = server.result(request)
        self.assertEqual(result["kind"], "cancelled")
        self.assertIsNone(result["sandbox"]["backend"])
        self.assertFalse(os.path.exists(target))

    def test_approval_never_answered_at_end_of_input_is_a_rejection(self):
        server = self.serve(approve=lambda params: None)
        target = self.path("never")
        request = server.request("bash.run", self.escalation(target, "the test asks and never hears back"))
        wait_until(lambda: server.approvals, "approval/request")
        server.process.stdin.close()
        result = server.result(request)
        self.assertEqual(result["kind"], "rejected")
        self.assertFalse(os.path.exists(target))
        self.assertEqual(server.close(), 0)


    def test_additional_write_lands_once_and_the_next_call_is_denied(self):
        # Narrow escalation: one extra writable root for one call, named exactly in approval/request;
        # the next call without it is denied again (checked on disk), and a declined one runs nothing.
        server = self.serve(approve=lambda params: {"approved": True})
        for backend in self.backends():
            with self.subTest(backend=backend):
                extra = os.path.join(self.outside, f"extra-{backend}")
                os.makedirs(extra)
                granted, again = os.path.join(extra, "granted"), os.path.join(extra, "again")
                policy = self.workspace_policy(backend=backend)
                before = len(server.approvals)
                result = server.call("bash.run", dict(policy, command=f"echo yes > '{granted}'",
                                                      additionalWrite=[extra],
                                                      justification="the build writes into the extra dir"))
                self.assertEqual(result["kind"], "completed", result)
                self.assertTrue(os.path.exists(granted))
                self.assertEqual(len(server.approvals), before + 1)
                params = server.approvals[-1]["params"]
                self.assertEqual(params["additionalWrite"], [os.path.realpath(extra)])
                self.assertEqual(params["additionalHosts"], [])
                self.assertEqual(params["mode"], "workspace-write")
                self.assertEqual(params["currentMode"], "workspace-write")
                result = server.call("bash.run", dict(policy, command=f"echo no > '{again}'"))
                self.assertEqual(result["kind"], "denied", result)
                self.assertFalse(os.path.exists(again))
                self.assertTrue(any(record["path"] == again for record in result["denials"]), result)
                self.assertEqual(len(server.approvals), before + 1)
        declining = self.serve(approve=lambda params: {"approved": False})
        extra = os.path.join(self.outside, "declined")
        os.makedirs(extra)
        result = declining.call("bash.run", self.workspace_policy(command=f"touch '{extra}/x'",
                                                                  additionalWrite=[extra], justification="why not"))
        self.assertEqual(result["kind"], "rejected", result)
        self.assertFalse(os.path.exists(os.path.join(extra, "x")))

    def test_a_bad_additional_write_is_refused_before_asking(self):
        server = self.serve(approve=lambda params: {"approved": True})
        cases = [({"additionalWrite": [self.outside]}, "additional_write requires a justification"),
                 ({"additionalWrite": [os.path.join(self.outside, "none")], "justification": "j"}, "does not exist"),
                 ({"additionalWrite": [self.outside], "justification": "j", "mode": "read-only"},
                  "additional_write needs workspace-write"),
                 ({"additionalHosts": ["example.com"], "justification": "j"},
                  "additional_hosts needs a restricted network")]
        for extra, said in cases:
            with self.subTest(params=extra):
                params = self.workspace_policy(command="true")
                params.update(extra)
                error = server.error("bash.run", params)
                self.assertIn(said, error["message"], error)
        self.assertEqual(server.approvals, [])


class FsTest(ServeCase):
    def test_file_operations_under_workspace_write(self):
        server = self.serve()
        policy = self.workspace_policy()
        written = server.call("fs.write", dict(policy, path="dir/a.txt", content="hello\nworld\n"))
        self.assertEqual(written["operation"], "write")
        self.assertTrue(written["created"])
        self.assertEqual(server.call("fs.read", dict(policy, path="dir/a.txt"))["content"], "hello\nworld\n")
        server.call("fs.edit", dict(policy, path="dir/a.txt", oldString="world", newString=""))
        server.call("fs.write", dict(policy, path="empty", content=""))
        self.assertEqual(os.path.getsize(self.path("empty")), 0)
        with open(self.path("dir", "a.txt"), encoding="utf-8") as handle:
            self.assertEqual(handle.read(), "hello\n\n")
        server.call("fs.mkdir", dict(policy, path="x/y/z", recursive=True))
        self.assertTrue(os.path.isdir(self.path("x", "y", "z")))
        moved = server.call("fs.move", dict(policy, source="dir/a.txt", destination="x/b.txt"))
        self.assertEqual(moved["path"], self.path("x", "b.txt"))
        self.assertTrue(os.path.exists(self.path("x", "b.txt")))
        self.assertFalse(os.path.exists(self.path("dir", "a.txt")))
        self.assertEqual(server.call("fs.remove", dict(policy, path="x", recursive=True))["removed"], 4)
        self.assertFalse(os.path.exists(self.path("x")))
        error = server.error("fs.edit", dict(policy, path="empty", oldString="absent", newString="x"))
        self.assertEqual(error["data"]["code"], "FS_TEXT_NOT_FOUND")

    def test_file_content_is_carried_whole_or_refused(self):
        server = self.serve()
        policy = self.workspace_policy()
        server.call("fs.write", dict(policy, path="nul.bin", content="a\u0000b"))
        with open(self.path("nul.bin"), "rb") as handle:
            self.assertEqual(handle.read(), b"a\0b")
        self.assertEqual(server.call("fs.read", dict(policy, path="nul.bin"))["content"], "a\u0000b")
        with open(self.path("latin1.txt"), "wb") as handle:
            handle.write(b"caf\xe9")
        error = server.error("fs.read", dict(policy, path="latin1.txt"))
        self.assertEqual(error["code"], -32000)
        self.assertIn('"content"', error["message"])
        error = server.error("fs.edit", dict(policy, path="nul.bin", oldString="a", newString="\u0000"))
        self.assertEqual(error["data"], {"parameter": "newString"})
        with open(self.path("nul.bin"), "rb") as handle:
            self.assertEqual(handle.read(), b"a\0b")

    def test_read_is_bounded_and_takes_a_range(self):
        server = self.serve()
        policy = self.workspace_policy()
        with open(self.path("sparse"), "wb") as handle:
            handle.truncate(20 << 30)
        error = server.error("fs.read", dict(policy, path="sparse"))
        self.assertEqual(error["code"], -32000)
        self.assertEqual(error["data"]["code"], "FS_TOO_LARGE")
        self.assertIn("read a range", error["data"]["message"])
        with open(self.path("small.txt"), "w", encoding="utf-8") as handle:
            handle.write("0123456789")
        self.assertEqual(server.call("fs.read", dict(policy, path="small.txt", offset=3, length=4))["content"], "3456")
        self.assertEqual(server.call("fs.read", dict(policy, path="small.txt", offset=8))["content"], "89")
        self.assertEqual(server.call("fs.read", dict(policy, path="sparse", offset=1 << 30, length=2))["content"],
                         "\u0000\u0000")
        for params, parameter in ((dict(offset=-1), "offset"), (dict(length=0), "length"),
                                  (dict(length="4"), "length")):
            error = server.error("fs.read", dict(policy, path="small.txt", **params))
            self.assertEqual(error["code"], -32602)
            self.assertEqual(error["data"], {"parameter": parameter})

    def test_every_change_outside_the_policy_is_denied_on_disk(self):
        server = self.serve()
        inside = self.path("keep.txt")
        with open(inside, "w", encoding="utf-8") as handle:
            handle.write("kept")
        read_only = {"mode": "read-only", "root": self.workspace}
        outside = os.path.join(self.outside, "new.txt")
        cases = [("fs.write", dict(read_only, path=inside, content="changed")),
                 ("fs.edit", dict(read_only, path=inside, oldString="kept", newString="changed")),
                 ("fs.mkdir", dict(read_only, path="newdir")),
                 ("fs.remove", dict(read_only, path=inside)),
                 ("fs.move", dict(read_only, source=inside, destination=self.path("moved.txt"))),
                 ("fs.write", self.workspace_policy(path=outside, content="x"))]
        for method, params in cases:
            with self.subTest(method=method, mode=params["mode"]):
                error = server.error(method, params)
                self.assertEqual(error["data"]["code"], "FS_SANDBOX_DENIED", error)
        with open(inside, encoding="utf-8") as handle:
            self.assertEqual(handle.read(), "kept")
        self.assertFalse(os.path.exists(outside))
        self.assertFalse(os.path.exists(self.path("newdir")))
        self.assertFalse(os.path.exists(self.path("moved.txt")))
        self.assertEqual(server.call("fs.read", dict(read_only, path=inside))["content"], "kept")


class JobTest(ServeCase):
    def test_a_job_escalates_through_approval_request(self):
        # job.start takes the escalation too: approval/request goes out from the job's thread, naming the
        # extra root; a bad one is job.start's own error, before anything starts.
        server = self.serve(approve=lambda params: {"approved": True})
        extra = os.path.join(self.outside, "job-extra")
        os.makedirs(extra)
        target = os.path.join(extra, "written")
        job = server.call("job.start", self.workspace_policy(command=f"echo job > '{target}'",
                                                             additionalWrite=[extra],
                                                             justification="the job writes its output there"))
        result = server.call("job.wait", {"jobId": job["jobId"]})
        self.assertEqual(result["kind"], "completed", result)
        self.assertTrue(os.path.exists(target))
        self.assertEqual(server.approvals[-1]["params"]["additionalWrite"], [os.path.realpath(extra)])
        error = server.error("job.start", self.workspace_policy(command="true", additionalWrite=[extra]))
        self.assertIn("additional_write requires a justification", error["message"], error)
        self.assertEqual(len(server.approvals), 1)

    def test_job_read_while_running_then_waited_for(self):
        server = self.serve()
        gate = self.path("gate")
        job = server.call("job.start", self.workspace_policy(
            command=f"echo first; while [ ! -e '{gate}' ]; do sleep 0.02; done; echo second >&2"))["jobId"]
        seen = {}

        def first_line_read():
            seen.update(server.call("job.read", {"jobId": job}))
            return "first" in seen["output"]

        wait_until(first_line_read, "the job's first line")
        self.assertFalse(seen["exited"])
        self.assertEqual(seen["offset"], 0)
        self.assertEqual(seen["dropped"], 0)
        offset = seen["nextOffset"]
        open(gate, "w", encoding="utf-8").close()
        result = server.call("job.wait", {"jobId": job})
        self.assertEqual(result["kind"], "completed")
        self.assertEqual(result["stdout"]["text"], "first\n")
        self.assertEqual(result["stderr"]["text"], "second\n")
        # Waited for: the job is released.
        self.assertEqual(server.error("job.read", {"jobId": job, "offset": offset})["data"], {"parameter": "jobId"})

    def test_job_read_from_an_offset_and_after_exit(self):
        server = self.serve()
        job = server.call("job.start", self.workspace_policy(command="printf 'abcdef'"))["jobId"]
        wait_until(lambda: server.call("job.read", {"jobId": job})["exited"], "the job to exit")
        read = server.call("job.read", {"jobId": job, "offset": 2})
        self.assertEqual(read, {"output": "cdef", "offset": 2, "nextOffset": 6, "dropped": 0, "exited": True})
        error = server.error("job.read", {"jobId": job, "offset": 7})
        self.assertEqual(error["data"], {"parameter": "offset"})

    def test_job_output_is_bounded_and_offsets_say_what_was_dropped(self):
        server = self.serve()
        total = 3 * 1024 * 1024 + 5
        job = server.call("job.start", self.workspace_policy(command=f"head -c {total} /dev/zero | tr '\\0' a"))["jobId"]
        wait_until(lambda: server.call("job.read", {"jobId": job})["exited"], "the job to exit")
        read = server.call("job.read", {"jobId": job, "offset": 0})
        self.assertEqual(read["nextOffset"], total)
        self.assertEqual(read["offset"], total - 1024 * 1024)
        self.assertEqual(read["dropped"], read["offset"])
        self.assertEqual(len(read["output"]), 1024 * 1024)
        result = server.call("job.wait", {"jobId": job})
        self.assertEqual(result["stdout"]["bytes"], total)
        self.assertTrue(result["stdout"]["truncated"])

    def test_jobs_held_are_bounded_until_waited_for(self):
        server = self.serve()
        policy = self.workspace_policy(backend="landlock", command="true")
        jobs = [server.call("job.start", policy)["jobId"] for _ in range(64)]
        error = server.error("job.start", policy)
        self.assertEqual(error["code"], -32002)
        self.assertEqual(server.call("job.wait", {"jobId": jobs[0]})["kind"], "completed")
        server.call("job.start", policy)

    def test_job_kill_and_wait_timeout(self):
        server = self.serve()
        started = self.path("started")
        job = server.call("job.start", self.workspace_policy(command=f"touch '{started}'; exec sleep 600"))["jobId"]
        wait_until(lambda: os.path.exists(started), "the job to start")
        error = server.error("job.wait", {"jobId": job, "timeoutMs": 1})
        self.assertEqual(error["code"], -32001)
        self.assertFalse(server.call("job.read", {"jobId": job})["exited"])
        self.assertEqual(server.call("job.kill", {"jobId": job, "signal": 9}), {})
        result = server.call("job.wait", {"jobId": job})
        self.assertEqual(result["kind"], "cancelled")

    def test_cancel_a_job_wait_leaves_the_job_running(self):
        server = self.serve()
        started = self.path("started")
        job = server.call("job.start", self.workspace_policy(command=f"touch '{started}'; exec sleep 600"))["jobId"]
        wait_until(lambda: os.path.exists(started), "the job to start")
        waiting = server.request("job.wait", {"jobId": job})
        server.send({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": waiting}})
        self.assertEqual(server.answer(waiting)["error"]["code"], -32800)
        self.assertFalse(server.call("job.read", {"jobId": job})["exited"])
        server.call("job.kill", {"jobId": job})
        self.assertEqual(server.call("job.wait", {"jobId": job})["kind"], "cancelled")

    def test_denied_write_in_a_job(self):
        server = self.serve()
        target = self.path("job-denied")
        job = server.call("job.start", {"mode": "read-only", "root": self.workspace,
                                        "command": f"echo x > '{target}'"})["jobId"]
        result = server.call("job.wait", {"jobId": job})
        self.assertEqual(result["kind"], "denied")
        self.assertFalse(os.path.exists(target))

    def test_end_of_input_kills_running_jobs(self):
        for backend in (["bwrap", "landlock"] if BWRAP else ["landlock"]):
            with self.subTest(backend=backend):
                server = self.serve()
                marker = f"{600 + len(backend)}.{uuid.uuid4().int % 10**9}"
                server.call("job.start", self.workspace_policy(backend=backend, command=f"exec sleep {marker}"))
                # The command itself, exec'd: every runner process between it and the service is set up.
                wait_until(lambda: processes_with(marker, "sleep"), "the job's command")
                self.assertEqual(server.close(), 0)
                # Under bwrap, the sandbox's own init dies of its parent's death (--die-with-parent) when the
                # kernel delivers it, a moment after the service reaped the outer bwrap: gone, maybe not at once.
                wait_until(lambda: not processes_with(marker), "the job's processes to be gone")

    def test_end_of_input_ends_a_job_wait_in_flight(self):
        server = self.serve()
        marker = f"605.{uuid.uuid4().int % 10**9}"
        job = server.call("job.start", self.workspace_policy(backend="landlock", command=f"exec sleep {marker}"))
        wait_until(lambda: processes_with(marker, "sleep"), "the job's command")
        waiting = server.request("job.wait", {"jobId": job["jobId"]})
        server.process.stdin.close()
        # The job is killed at end of input, so the wait answers with its end instead of holding the server up.
        result = server.result(waiting)
        self.assertEqual(result["kind"], "cancelled")
        self.assertEqual(result["signal"], signal.SIGKILL)
        self.assertEqual(server.close(), 0)
        self.assertFalse(processes_with(marker))


class StopTest(ServeCase):
    def test_a_signal_ends_the_service_and_every_command_it_runs(self):
        for backend in (["bwrap", "landlock"] if BWRAP else ["landlock"]):
            for signal_number in (signal.SIGTERM, signal.SIGINT):
                with self.subTest(backend=backend, signal=signal_number.name):
                    server = self.serve()
                    job_marker = f"{700 + signal_number}.{uuid.uuid4().int % 10**9}"
                    call_marker = f"{800 + signal_number}.{uuid.uuid4().int % 10**9}"
                    policy = self.workspace_policy(backend=backend)
                    server.call("job.start", dict(policy, command=f"exec sleep {job_marker}"))
                    server.request("bash.run", dict(policy, command=f"exec sleep {call_marker}"))
                    wait_until(lambda: processes_with(job_marker, "sleep") and processes_with(call_marker, "sleep"),
                               "both commands")
                    server.process.send_signal(signal_number)
                    self.assertEqual(server.process.wait(timeout=PATIENCE), -signal_number)
                    wait_until(lambda: not processes_with(job_marker) and not processes_with(call_marker),
                               "every command to be gone")


class CommandLineTest(unittest.TestCase):
    def run_serve(self, *arguments):
        return subprocess.run([BIN, "serve", *arguments], input=b"", capture_output=True, check=False)

    def test_help_and_usage(self):
        self.assertEqual(self.run_serve("--help").returncode, 0)
        self.assertIn(b"Usage: dsh-sandbox serve", self.run_serve("--help").stdout)
        for arguments, named in ((["extra"], b"extra"), (["--approval-timeout", "0"], b"--approval-timeout"),
                                 (["--mode", "read-only"], b"--mode")):
            with self.subTest(arguments=arguments):
                refused = self.run_serve(*arguments)
                self.assertEqual(refused.returncode, 2)
                self.assertIn(named, refused.stderr)
                self.assertEqual(refused.stdout, b"")

    def test_bad_config_refused_at_start(self):
        os.makedirs(SCRATCH, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=SCRATCH, suffix=".json") as config:
            config.write('{"mode": "sideways"}')
            config.flush()
            refused = self.run_serve("--config", config.name)
        self.assertEqual(refused.returncode, 2)
        self.assertIn(b"mode", refused.stderr)
        self.assertEqual(refused.stdout, b"")


def main():
    if not BIN or not os.access(BIN, os.X_OK):
        print(f"DSH_SANDBOX_BIN is not an executable: {BIN!r}")
        return 1
    runner = unittest.TextTestRunner(stream=sys.stdout, verbosity=2, descriptions=False)
    program = unittest.main(module=__name__, testRunner=runner, exit=False, argv=sys.argv[:1] + sys.argv[1:])
    return 0 if program.result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
