#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The network dimension's way through the front ends (issue 21, part D: the provider's wiring).

Each case runs the built `dsh-sandbox` ($DSH_SANDBOX_BIN) as a client would — `bash --json`,
`serve` (`bash.run`, `job.start` + `job.wait`), `mcp` (`tools/call` bash), `confine`, `probe` —
on the real kernel with real bwrap, per backend, against a TCP server this test starts on the
host's loopback, and judges the result object and what the server saw:

- under the default network ("on") a connect to the host's loopback server is made (the server
  accepts it), and every bash result carries `refusedConnections: []` and no
  `refusedConnectionsDropped`: bash --json, serve's bash.run and job.wait, mcp's
  structuredContent, whose outputSchema requires the member;
- confine's facts say `"network": "on"`; probe lists, per usable backend, the network policies it
  holds (`on` and `off` at least), in its JSON and its text;
- under the allow-list (`--allow-host`), `bash --json` and an mcp server started with it run the
  command with HTTPS_PROXY at the call's proxy and "use-vc" in RES_OPTIONS, and a name no entry
  allows is refused by the DNS stub with the record {op "dns", host, port 53, rule
  "host-not-allowed"};
- under "off" (`--network off`, serve's `network` param, `mcp --network off`) the same connect is
  refused and the server accepts nothing: under Landlock the supervisor refuses it (EACCES) and the
  result's `refusedConnections` holds {op "connect", host "127.0.0.1", port, rule "local-port"};
  under bwrap the command's 127.0.0.1 is a loopback of its own (--unshare-net), where nothing
  listens on the port (ECONNREFUSED, no record: no supervisor is asked about its own loopback).

The end-to-end network cases (DNS, the proxy, TLS, UDP, metadata addresses) are
tests/reach/test_network.py's.

Output is unittest's verbose form on stdout, one line per case, then "N passed, N failed,
N skipped" (a "# SKIP: case: reason" line for each skip).
"""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "livability"))
from livability import (BIN, SCRATCH, bwrap_works, landlock_abi, mcp_results, run_suite,  # noqa: E402
                        serve_results)

# A bound on a run that hangs, never a measurement.
PATIENCE = 120
BACKENDS = [name for name, usable in (("landlock", landlock_abi() > 0), ("bwrap", bwrap_works())) if usable]
SOURCE_ROOT = os.environ.get("DSH_SOURCE_ROOT", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

# Connects to the port given and says so; a refused connect prints the errno's name and exits 3.
CONNECT = ("import errno, socket, sys\n"
           "try:\n"
           "    socket.create_connection(('127.0.0.1', int(sys.argv[1])), 10).close()\n"
           "    print('connected')\n"
           "except OSError as error:\n"
           "    print(errno.errorcode.get(error.errno, error.errno)); sys.exit(3)\n")


class LoopbackServer:
    """A TCP server on the host's 127.0.0.1 that keeps the peer of every connection it accepts."""

    def __init__(self):
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(16)
        self.port = self.listener.getsockname()[1]
        self.peers = []
        self.changed = threading.Condition()
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        while True:
            try:
                connection, peer = self.listener.accept()
            except OSError:
                return
            with self.changed:
                self.peers.append(peer)
                self.changed.notify_all()
            connection.close()

    def count(self):
        """The connections accepted so far, every earlier one included: a sentinel of ours is accepted
        after whatever came before it (one listener, in order), and only it is left out."""
        with socket.create_connection(("127.0.0.1", self.port), PATIENCE) as sentinel:
            mine = sentinel.getsockname()
            with self.changed:
                self.changed.wait_for(lambda: mine in self.peers, PATIENCE)
                self.peers.remove(mine)
                return len(self.peers)

    def close(self):
        self.listener.shutdown(socket.SHUT_RDWR)
        self.listener.close()
        self.thread.join(PATIENCE)


class NetworkPlumbing(unittest.TestCase):
    def setUp(self):
        if not BACKENDS:
            self.skipTest("neither Landlock nor bwrap can confine on this host")
        os.makedirs(SCRATCH, exist_ok=True)
        self.home = tempfile.mkdtemp(prefix="network-plumbing-", dir=SCRATCH)
        self.workspace = os.path.join(self.home, "workspace")
        os.makedirs(self.workspace)
        self.env = dict(os.environ, HOME=self.home, XDG_CONFIG_HOME=os.path.join(self.home, "config"),
                        XDG_STATE_HOME=os.path.join(self.home, "state"),
                        XDG_CACHE_HOME=os.path.join(self.home, "cache"),
                        DSH_SANDBOX_STATE_DIR=os.path.join(self.home, "state"))
        self.env.pop("DSH_SANDBOX_CONFIG", None)
        self.server = LoopbackServer()
        self.command = f"python3 -c \"$CONNECT\" {self.server.port}"
        self.env["CONNECT"] = CONNECT

    def tearDown(self):
        self.server.close()
        shutil.rmtree(self.home, ignore_errors=True)


    def off_record(self):
        # A host loopback port the policy does not allow (docs/bash-tool.md, "Refused connections").
        return {"op": "connect", "host": "127.0.0.1", "port": self.server.port, "rule": "local-port",
                "source": "supervisor"}

    def dsh(self, *arguments):
        return subprocess.run([BIN, *arguments], capture_output=True, check=False, env=self.env, text=True,
                              timeout=PATIENCE)

    def bash_json(self, backend, network=()):
        """`dsh-sandbox bash --json` as a harness runs it; the result object."""
        done = self.dsh("bash", "--backend", backend, "--mode", "workspace-write", "--root", self.workspace,
                        *network, "--json", "--", self.command)
        self.assertEqual(done.returncode, 0, done.stderr)
        return json.loads(done.stdout)

    def serve(self, requests):
        """One `dsh-sandbox serve`, the requests answered in order; the results by id."""
        return serve_results(self, requests, self.env, self.home, PATIENCE)

    def mcp(self, backend, requests, network=()):
        """`dsh-sandbox mcp` initialized, then `requests` (id 2...); the answers by id."""
        options = ["--backend", backend, "--mode", "workspace-write", "--root", self.workspace, *network]
        return mcp_results(self, options, requests, self.env, PATIENCE)

    def assert_connected_and_nothing_recorded(self, result):
        self.assertEqual(result["stdout"]["text"], "connected\n", result)
        self.assertEqual(result["refusedConnections"], [], result)
        self.assertNotIn("refusedConnectionsDropped", result)

    def assert_refused_and_recorded(self, backend, result, accepted_before):
        """Refused and recorded under Landlock; under bwrap the command has a loopback of its own
        (--unshare-net), where nobody listens on the port: refused by that loopback's kernel, which
        no supervisor is asked about.  Either way the host's server sees nothing."""
        self.assertEqual(result["exitCode"], 3, result)
        if backend == "bwrap":
            self.assertEqual(result["stdout"]["text"], "ECONNREFUSED\n", result)
            self.assertNotIn(self.off_record(), result["refusedConnections"], result)
        else:
            self.assertEqual(result["stdout"]["text"], "EACCES\n", result)
            self.assertIn(self.off_record(), result["refusedConnections"], result)
        self.assertEqual(self.server.count(), accepted_before, "the host's loopback server saw a connection")

    def test_on_bash_json_connects_and_records_nothing(self):
        for backend in BACKENDS:
            with self.subTest(backend=backend):
                before = self.server.count()
                self.assert_connected_and_nothing_recorded(self.bash_json(backend))
                self.assertEqual(self.server.count(), before + 1)

    def test_on_serve_bash_run_and_job_wait_carry_an_empty_list(self):
        for backend in BACKENDS:
            with self.subTest(backend=backend):
                policy = {"mode": "workspace-write", "root": self.workspace, "backend": backend,
                          "command": self.command}
                answers = self.serve([("bash.run", policy), ("job.start", policy),
                                      ("job.wait", lambda answers: {"jobId": answers[2]["jobId"]})])
                self.assert_connected_and_nothing_recorded(answers[1])
                self.assert_connected_and_nothing_recorded(answers[3])

    def test_on_mcp_requires_and_carries_the_list(self):
        for backend in BACKENDS:
            with self.subTest(backend=backend):
                answers = self.mcp(backend, [
                    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
                    {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                     "params": {"name": "bash", "arguments": {"command": self.command}}}])
                bash = next(tool for tool in answers[2]["tools"] if tool["name"] == "bash")
                self.assertIn("refusedConnections", bash["outputSchema"]["required"])
                record = bash["outputSchema"]["properties"]["refusedConnections"]["items"]
                self.assertEqual(record["required"], ["op", "host", "port", "rule"])
                self.assert_connected_and_nothing_recorded(answers[3]["structuredContent"])

    def test_confine_facts_say_the_network(self):
        for backend in BACKENDS:
            with self.subTest(backend=backend):
                done = self.dsh("confine", "--backend", backend, "--mode", "read-only", "--root", self.workspace,
                                "--", "true")
                self.assertEqual(done.returncode, 0, done.stderr)
                self.assertEqual(json.loads(done.stdout)["network"], "on")

    def test_probe_lists_the_network_policies_each_backend_holds(self):
        done = self.dsh("probe", "--json")
        self.assertEqual(done.returncode, 0, done.stderr)
        report = json.loads(done.stdout)
        for status in report["backends"]:
            if status["name"] in BACKENDS and status["usable"]:
                with self.subTest(backend=status["name"]):
                    self.assertIn("on", status["network"], status)
                    self.assertIn("off", status["network"], status)
                    self.assertLessEqual(set(status["network"]), {"on", "off", "allow-list"}, status)
            if not status["usable"]:
                self.assertNotIn("network", status, status)
        text = self.dsh("probe")
        self.assertIn("network: on, off", text.stdout)

    def test_off_bash_json_refuses_and_records(self):
        for backend in BACKENDS:
            with self.subTest(backend=backend):
                before = self.server.count()
                self.assert_refused_and_recorded(backend, self.bash_json(backend, ("--network", "off")), before)

    def test_off_serve_bash_run_and_job_wait_carry_the_record(self):
        for backend in BACKENDS:
            with self.subTest(backend=backend):
                policy = {"mode": "workspace-write", "root": self.workspace, "backend": backend,
                          "network": "off", "command": self.command}
                before = self.server.count()
                answers = self.serve([("bash.run", policy), ("job.start", policy),
                                      ("job.wait", lambda answers: {"jobId": answers[2]["jobId"]})])
                self.assert_refused_and_recorded(backend, answers[1], before)
                self.assert_refused_and_recorded(backend, answers[3], before)

    def test_off_mcp_structured_content_carries_the_record(self):
        for backend in BACKENDS:
            with self.subTest(backend=backend):
                before = self.server.count()
                answers = self.mcp(backend, [{"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                                              "params": {"name": "bash", "arguments": {"command": self.command}}}],
                                   network=("--network", "off"))
                self.assert_refused_and_recorded(backend, answers[2]["structuredContent"], before)

    def test_allow_list_bash_and_mcp_point_at_the_proxy_and_record_a_denied_name(self):
        # The upstream is never asked here: the only name looked up is one no entry allows.
        network = ("--allow-host", "allowed.dsh.test", "--dns-upstream", "127.0.0.1:9")
        command = ("printf '%s\\n' \"$HTTPS_PROXY\" \"$RES_OPTIONS\"; "
                   "python3 -c \"import socket; socket.getaddrinfo('denied.dsh.test', 80)\" 2>/dev/null; true")
        record = {"op": "dns", "host": "denied.dsh.test", "port": 53, "rule": "host-not-allowed", "source": "proxy"}
        for backend in BACKENDS:
            with self.subTest(backend=backend):
                done = self.dsh("bash", "--backend", backend, "--mode", "workspace-write", "--root",
                                self.workspace, *network, "--json", "--", command)
                self.assertEqual(done.returncode, 0, done.stderr)
                results = [json.loads(done.stdout)]
                answers = self.mcp(backend, [{"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                                              "params": {"name": "bash", "arguments": {"command": command}}}],
                                   network=network)
                results.append(answers[2]["structuredContent"])
                for result in results:
                    proxy, resolver = result["stdout"]["text"].splitlines()[:2]
                    self.assertRegex(proxy, r"^http://127\.0\.0\.1:[0-9]+$", result)
                    self.assertIn("use-vc", resolver.split(), result)
                    self.assertIn(record, result["refusedConnections"], result)

    def test_off_confine_facts_say_off(self):
        for backend in BACKENDS:
            with self.subTest(backend=backend):
                done = self.dsh("confine", "--backend", backend, "--mode", "read-only", "--root", self.workspace,
                                "--network", "off", "--", "true")
                self.assertEqual(done.returncode, 0, done.stderr)
                self.assertEqual(json.loads(done.stdout)["network"], "off")


if __name__ == "__main__":
    sys.exit(run_suite(__name__))
