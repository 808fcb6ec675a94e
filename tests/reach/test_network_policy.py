# SPDX-License-Identifier: MIT
"""The network dimension's policy surface (issue 21, part A), driven through the real program.

Every refusal here is judged twice: by the exit status and one-line message, and by a marker file the
command would have made, which must not appear (nothing ran).  What a policy that passes says is read
back from `policy resolve --json` and from what `mcp` tells its client.  Enforcement itself (what a
confined command reaches) is the network suites' to show; this suite shows that the policy every front
end builds is the one the user asked for, or a refusal.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "livability"))
import livability  # noqa: E402

BIN = livability.BIN
DFA_REFUSAL = ("danger-full-access confines nothing, so no network policy can be held; use read-only or "
               "workspace-write")


class NetworkPolicyCase(unittest.TestCase):
    def setUp(self):
        os.makedirs(livability.SCRATCH, exist_ok=True)
        self.place = tempfile.mkdtemp(prefix="network-policy-", dir=livability.SCRATCH)
        self.workspace = os.path.join(self.place, "workspace")
        os.makedirs(self.workspace)
        self.marker = os.path.join(self.workspace, "ran")
        self.env = dict(os.environ)
        self.env.pop("DSH_SANDBOX_CONFIG", None)
        self.env.update({"XDG_CONFIG_HOME": os.path.join(self.place, "config"),
                         "XDG_CACHE_HOME": os.path.join(self.place, "cache"),
                         "DSH_SANDBOX_STATE_DIR": os.path.join(self.place, "state")})

    def tearDown(self):
        shutil.rmtree(self.place, ignore_errors=True)

    def dsh(self, *arguments, stdin=b""):
        return subprocess.run([BIN, *arguments], input=stdin, capture_output=True, cwd=self.workspace, env=self.env,
                              check=False)

    def config(self, document):
        path = os.path.join(self.place, "config.json")
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(document, handle)
        return path

    def touch_command(self):
        return ["sh", "-c", f"touch '{self.marker}'"]

    def assert_refused(self, outcome, status, *said):
        stderr = outcome.stderr.decode(errors="replace")
        self.assertEqual(outcome.returncode, status, stderr)
        self.assertEqual(len(stderr.strip().splitlines()), 1, stderr)
        for words in said:
            self.assertIn(words, stderr)
        self.assertFalse(os.path.exists(self.marker), "the command ran")

    def resolved_network(self, *arguments):
        outcome = self.dsh("policy", "resolve", "--root", self.workspace, *arguments, "--json")
        self.assertEqual(outcome.returncode, 0, outcome.stderr)
        return json.loads(outcome.stdout).get("network", "on")


class BadInputTest(NetworkPolicyCase):
    def test_allow_host_star_is_exit_2_naming_the_pattern_and_runs_nothing(self):
        outcome = self.dsh("run", "--allow-host", "*", "--", *self.touch_command())
        self.assert_refused(outcome, 2, '--allow-host "*": a pattern must name a domain ("*" alone allows everything)')
        self.assertEqual(outcome.stdout, b"")

    def test_every_bad_pattern_on_every_subcommand_is_exit_2(self):
        patterns = {"com": "bare top-level name", "*.com": "top-level name", "https://example.com": "no scheme",
                    "example.com/path": "no path", "user@example.com": "no user info", "@nope": "unknown named set",
                    "*foo.example.com": "wildcard", "example.com:0": "1 to 65535", "::1": "brackets",
                    "127.1": "all digits"}
        for pattern, reason in patterns.items():
            for command in (["run", "--allow-host", pattern, "--", *self.touch_command()],
                            ["confine", "--allow-host", pattern, "--", *self.touch_command()],
                            ["bash", "--allow-host", pattern, "--", f"touch '{self.marker}'"],
                            ["mcp", "--allow-host", pattern]):
                with self.subTest(pattern=pattern, command=command[0]):
                    outcome = self.dsh(*command)
                    self.assert_refused(outcome, 2, f'--allow-host "{pattern}": ', reason)
                    self.assertEqual(outcome.stdout, b"")

    def test_conflicting_network_flags_are_exit_2(self):
        cases = [
            (["--network", "off", "--allow-host", "example.com"], "--allow-host selects the allow-list"),
            (["--allow-host", "example.com", "--network", "on"], "--allow-host selects the allow-list"),
            (["--network", "on", "--allow-local-port", "5432"], "cannot be combined with --network on"),
            (["--dns-upstream", "127.0.0.1:53"], "it needs --allow-host"),
            (["--network", "sideways"], "--network expects on or off"),
            (["--allow-local-port", "65536"], "--allow-local-port expects a port"),
            (["--allow-host", "example.com", "--dns-upstream", "resolver.example:53"], "--dns-upstream"),
        ]
        for flags, said in cases:
            with self.subTest(flags=flags):
                self.assert_refused(self.dsh("run", *flags, "--", *self.touch_command()), 2, said)

    def test_a_bad_config_network_is_exit_2_naming_file_and_key(self):
        config = self.config({"network": {"allowHosts": ["ok.example", "*"]}})
        outcome = self.dsh("run", "--config", config, "--", *self.touch_command())
        self.assert_refused(outcome, 2, config, 'key "network": "allowHosts"[1] "*": a pattern must name a domain')
        config = self.config({"network": {"allowHosts": ["ok.example"], "allowEverything": True}})
        self.assert_refused(self.dsh("run", "--config", config, "--", *self.touch_command()), 2,
                            '"allowEverything" is an unknown key')

    def test_remote_refuses_network_flags_rather_than_dropping_them(self):
        outcome = self.dsh("run", "--remote", "nowhere.invalid", "--network", "off", "--", *self.touch_command())
        self.assert_refused(outcome, 2, "cannot be used with --remote")

    def test_fs_takes_no_network_flag(self):
        outcome = self.dsh("fs", "read", "--network", "off", os.path.join(self.workspace, "x"))
        self.assert_refused(outcome, 2, "--network does not apply here")


class DangerFullAccessTest(NetworkPolicyCase):
    """Nothing confines danger-full-access, so a network policy there is refused, never run without."""

    def test_flags_under_danger_full_access_are_refused_and_nothing_runs(self):
        for flags in (["--network", "off"], ["--allow-host", "example.com"], ["--allow-local-port", "5432"]):
            with self.subTest(flags=flags):
                outcome = self.dsh("run", "--mode", "danger-full-access", *flags, "--", *self.touch_command())
                self.assert_refused(outcome, 125, DFA_REFUSAL)

    def test_the_config_network_under_danger_full_access_is_refused(self):
        config = self.config({"mode": "danger-full-access", "network": "off"})
        self.assert_refused(self.dsh("run", "--config", config, "--", *self.touch_command()), 125, DFA_REFUSAL)
        # A call that says on replaces the config's network, and danger-full-access runs as it always did.
        outcome = self.dsh("run", "--config", config, "--network", "on", "--", *self.touch_command())
        self.assertEqual(outcome.returncode, 0, outcome.stderr)
        self.assertTrue(os.path.exists(self.marker))

    def test_mcp_refuses_to_serve_a_network_under_danger_full_access(self):
        request = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                         "clientInfo": {"name": "t", "version": "1"}}}).encode() + b"\n"
        outcome = self.dsh("mcp", "--mode", "danger-full-access", "--network", "off", "--root", self.workspace,
                           stdin=request)
        self.assertEqual(outcome.returncode, 125, outcome.stderr)
        self.assertIn(DFA_REFUSAL, outcome.stderr.decode())
        self.assertIn(DFA_REFUSAL, outcome.stdout.decode())


class ResolvedPolicyTest(NetworkPolicyCase):
    def test_flags_become_the_policy_network(self):
        self.assertEqual(self.resolved_network(), "on")
        self.assertEqual(self.resolved_network("--network", "off"), "off")
        self.assertEqual(self.resolved_network("--allow-local-port", "5432"), {"allowLocalPorts": [5432]})
        self.assertEqual(self.resolved_network("--allow-host", "@npm", "--allow-host", "*.example.com:443",
                                               "--allow-local-port", "6379", "--dns-upstream", "[::1]:53"),
                         {"allowHosts": ["@npm", "*.example.com:443"], "allowLocalPorts": [6379],
                          "dnsUpstream": "[::1]:53"})

    def test_policy_resolve_text_says_the_network_unless_it_is_on(self):
        outcome = self.dsh("policy", "resolve", "--root", self.workspace, "--allow-host", "@npm", "--allow-local-port",
                           "80", "--allow-host", "a.example", "--dns-upstream", "127.0.0.1:53")
        self.assertEqual(outcome.returncode, 0, outcome.stderr)
        lines = outcome.stdout.decode().splitlines()
        self.assertEqual(lines[2:], ["network: allow-list", "allowHost: @npm", "allowHost: a.example",
                                     "allowLocalPort: 80", "dnsUpstream: 127.0.0.1:53"])
        outcome = self.dsh("policy", "resolve", "--root", self.workspace, "--network", "off")
        self.assertEqual(outcome.stdout.decode().splitlines()[2:], ["network: off"])
        outcome = self.dsh("policy", "resolve", "--root", self.workspace)
        self.assertEqual(len(outcome.stdout.decode().splitlines()), 2)

    def test_the_config_network_is_the_default_and_flags_replace_it_whole(self):
        configured = {"allowHosts": ["@github"], "allowLocalPorts": [5432]}
        config = self.config({"network": configured})
        self.assertEqual(self.resolved_network("--config", config), configured)
        # Replaced, never merged: the config's hosts and ports are not kept beside the call's.
        self.assertEqual(self.resolved_network("--config", config, "--allow-host", "a.example"),
                         {"allowHosts": ["a.example"]})
        self.assertEqual(self.resolved_network("--config", config, "--network", "off"), "off")
        self.assertEqual(self.resolved_network("--config", config, "--network", "on"), "on")

    def test_mcp_tells_its_client_the_network(self):
        request = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                         "clientInfo": {"name": "t", "version": "1"}}}).encode() + b"\n"
        outcome = self.dsh("mcp", "--root", self.workspace, "--allow-host", "a.example", "--allow-local-port", "5432",
                           stdin=request)
        self.assertEqual(outcome.returncode, 0, outcome.stderr)
        instructions = json.loads(outcome.stdout.splitlines()[0])["result"]["instructions"]
        self.assertIn('The network is an allow-list: only these hosts are reached', instructions)
        self.assertIn('"a.example"; host loopback ports reached: 5432.', instructions)
        outcome = self.dsh("mcp", "--root", self.workspace, "--network", "off", stdin=request)
        self.assertIn("The network is off", json.loads(outcome.stdout.splitlines()[0])["result"]["instructions"])
        outcome = self.dsh("mcp", "--root", self.workspace, stdin=request)
        self.assertNotIn("The network is", json.loads(outcome.stdout.splitlines()[0])["result"]["instructions"])


if __name__ == "__main__":
    sys.exit(livability.run_suite(__name__))
