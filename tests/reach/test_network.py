# SPDX-License-Identifier: MIT
"""The network dimension (issue 21) on loopback fixtures, on both backends, through the real CLI.

The test plays the network: dnsmasq as the upstream resolver (`--dns-upstream 127.0.0.1:PORT`, made-up
names under dsh.test, every query logged), an HTTP server, a TLS server with a certificate made now, a
UDP echo (tests/network/fixtures.py), all on 127.0.0.1.  A confined command (`dsh-sandbox bash --json`,
tests/network/probe.py or curl inside) tries to reach them under `--network on`, `--network off`,
`--allow-local-port` and the allow-list (`--allow-host`).  Every refusal is judged on the fixture's side
too — nothing accepted, nothing requested, no datagram, no query in dnsmasq's log — and by its record in
the result's refusedConnections ({op, host, port, rule}).  Each case runs once per backend (the classes
at the end); the cases that matter most in both confined modes.

Output is unittest's verbose form on stdout, one line per case, then "N passed, N failed, N skipped".
"""
import json
import os
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "livability"))
sys.path.insert(0, os.path.join(HERE, "..", "network"))
import fixtures  # noqa: E402
import livability  # noqa: E402

BIN = livability.BIN
MODES = ("workspace-write", "read-only")
# A bound on a call that hangs, never a measurement.
PATIENCE = 180
PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")
UNAWARE = "env " + " ".join(f"-u {name}" for name in PROXY_VARIABLES)
# Any address's port 53: the command's resolver, whatever it names (the supervisor sends it to the stub).
SOME_RESOLVER = "192.0.2.53"
RECORD_KEYS = {"op", "host", "port", "rule", "source"}
# Under off a host loopback port is refused as "local-port" (a loopback port not allowed: the supervisor's
# rule, docs/network.md), which the design first called "network-off": either says that off held.
LOOPBACK_OFF = ("local-port", "network-off")
OPS = {"connect", "dns", "http"}
RULES = {"network-off", "host-not-allowed", "address-not-resolved", "metadata-address", "sni-mismatch",
         "protocol-not-allowed", "local-port", "bad-request"}


def backends():
    found = []
    if livability.landlock_abi() > 0:
        found.append("landlock")
    if livability.bwrap_works():
        found.append("bwrap")
    return found


def host_address():
    """A non-loopback IPv4 address of this host, or None."""
    listing = subprocess.run(["ip", "-j", "-4", "addr", "show"], capture_output=True, text=True, check=False)
    try:
        interfaces = json.loads(listing.stdout or "[]")
    except json.JSONDecodeError:
        return None
    for interface in interfaces:
        for address in interface.get("addr_info", []):
            if not address.get("local", "127.").startswith("127."):
                return address["local"]
    return None


class Sections(dict):
    """A call's stdout split at its "== label" lines: label -> the lines under it."""

    def __init__(self, text):
        super().__init__()
        label = None
        for line in text.splitlines():
            if line.startswith("== "):
                label = line[3:]
                self[label] = []
            elif label is not None:
                self[label].append(line)

    def line(self, label, prefix):
        """The first line of `label` starting with `prefix`, or None."""
        return next((line for line in self.get(label, []) if line.startswith(prefix)), None)


def brief(result):
    """What a failure message shows of a result: the command's output and the records."""
    return json.dumps({"stdout": result.get("stdout", {}).get("text", "")[-3000:],
                       "stderr": result.get("stderr", {}).get("text", "")[-1000:],
                       "refusedConnections": result.get("refusedConnections")}, indent=1)


class NetworkReach:
    """The cases, once per backend (the classes below)."""
    backend = None
    place = None
    network = None

    @classmethod
    def setUpClass(cls):
        if cls.backend not in backends():
            return
        if fixtures.missing_tools():
            raise unittest.SkipTest(f"no {', '.join(fixtures.missing_tools())} (scripts/ensure-deps.sh installs them)")
        os.makedirs(livability.SCRATCH, exist_ok=True)
        cls.place = tempfile.mkdtemp(prefix="reach-network-", dir=livability.SCRATCH)
        os.chmod(cls.place, 0o755)
        cls.probe_path = os.path.join(cls.place, "probe.py")
        shutil.copy(os.path.join(HERE, "..", "network", "probe.py"), cls.probe_path)
        cls.network = fixtures.Fixtures(cls.place)

    @classmethod
    def tearDownClass(cls):
        if cls.network:
            cls.network.close()
        if cls.place:
            shutil.rmtree(cls.place, ignore_errors=True)

    def setUp(self):
        if self.backend not in backends():
            self.skipTest(f"{self.backend} does not work on this host")
        self.network.clear()
        self.mark = self.network.dns.mark()
        self.workspace = tempfile.mkdtemp(prefix="workspace-", dir=self.place)
        self.addCleanup(shutil.rmtree, self.workspace, True)
        self.env = dict(os.environ, HOME=self.workspace, XDG_CONFIG_HOME=os.path.join(self.workspace, ".config"),
                        XDG_STATE_HOME=os.path.join(self.workspace, ".state"),
                        XDG_CACHE_HOME=os.path.join(self.workspace, ".cache"),
                        DSH_SANDBOX_STATE_DIR=os.path.join(self.workspace, ".state"))
        for name in PROXY_VARIABLES + ("NO_PROXY", "no_proxy", "DSH_SANDBOX_CONFIG", "RES_OPTIONS"):
            self.env.pop(name, None)

    # -- the policies --------------------------------------------------------------------------------

    def allow(self, *hosts):
        """The allow-list of `hosts`, resolved through the fixture's dnsmasq."""
        arguments = []
        for host in hosts:
            arguments += ["--allow-host", host]
        return arguments + ["--dns-upstream", self.network.dns.upstream]

    OFF = ("--network", "off")

    # -- running the command --------------------------------------------------------------------------

    def probe(self, label, *arguments, unaware=False):
        """One step of a call: the probe with `arguments` under "== label"."""
        words = ["python3", self.probe_path, *map(str, arguments)]
        return f"echo {shlex.quote('== ' + label)}; {UNAWARE + ' ' if unaware else ''}{shlex.join(words)} 2>&1"

    @staticmethod
    def curl(label, url, *options):
        """curl (proxy-aware: it reads the proxy variables) under "== label": the body, 'code N', 'curl-exit N'."""
        words = ["curl", "-sS", "--max-time", "20", *options, "-w", "\\ncode %{http_code}\\n", url]
        return f"echo {shlex.quote('== ' + label)}; {shlex.join(words)} 2>&1; echo \"curl-exit $?\""

    def call(self, policy, steps, mode="workspace-write"):
        """`dsh-sandbox bash --json` of the steps under `policy`: (Sections of stdout, the result object).
        Every record it holds is checked for shape first."""
        command = "; ".join(steps)
        done = subprocess.run([BIN, "bash", "--backend", self.backend, "--mode", mode, "--root", self.workspace,
                               *policy, "--json", "--", command], capture_output=True, text=True, check=False,
                              env=self.env, cwd=self.workspace, timeout=PATIENCE)
        self.assertEqual(done.returncode, 0, f"bash --json {policy}: {done.stderr}{done.stdout[-2000:]}")
        result = json.loads(done.stdout)
        self.assertEqual(result["sandbox"]["backend"], self.backend, brief(result))
        self.assertIn("refusedConnections", result, brief(result))
        for record in result["refusedConnections"]:
            self.assertEqual(set(record), RECORD_KEYS, record)
            self.assertIn(record["op"], OPS, record)
            self.assertIn(record["rule"], RULES, record)
            # The supervisor refuses connects and sends; DNS queries and proxied requests are the proxy's.
            self.assertIn(record["source"], {"supervisor", "proxy"} if record["op"] == "connect" else {"proxy"}, record)
            self.assertIsInstance(record["port"], int, record)
        self.network.settle()
        return Sections(result["stdout"]["text"]), result

    def assert_record(self, result, op, host, port, rules):
        """refusedConnections holds {op, host, port, rule} with the rule one of `rules` (a name or a tuple)."""
        rules = (rules,) if isinstance(rules, str) else rules
        # A name is recorded as the stub read it: DNS names compare without case.
        found = [record for record in result["refusedConnections"]
                 if (record["op"], record["host"].lower(), record["port"]) == (op, host.lower(), port)
                 and record["rule"] in rules]
        self.assertTrue(found, f"no record {op} {host}:{port} {rules} in {brief(result)}")

    def assert_untouched(self, since=None):
        """No fixture saw anything: no connection accepted, no datagram, no query logged."""
        self.assertEqual(self.network.http.accepted(), 0, self.network.http.requests())
        self.assertEqual(self.network.tls.accepted(), 0, self.network.tls.first_bytes())
        self.assertEqual(self.network.udp.received(), [])
        self.assertEqual(self.network.dns.queried(self.mark if since is None else since), [])

    def each_mode(self, body):
        for mode in MODES:
            with self.subTest(mode=mode):
                self.network.clear()
                self.mark = self.network.dns.mark()
                body(mode)

    @property
    def ports(self):
        return self.network.http.port, self.network.tls.port, self.network.udp.port, self.network.dns.port

    # -- on ------------------------------------------------------------------------------------------

    def test_on_is_unchanged(self):
        http_port, _, udp_port, dns_port = self.ports
        for policy in ((), ("--network", "on")):
            with self.subTest(policy=policy):
                self.network.clear()
                out, result = self.call(policy, [
                    self.probe("http", "http", "127.0.0.1", http_port, "allowed.dsh.test"),
                    self.probe("udp", "udp", "127.0.0.1", udp_port, "sendto"),
                    self.probe("dns", "dns", "127.0.0.1", dns_port, "allowed.dsh.test", "A", "udp"),
                    "echo '== env'; env"])
                self.assertIn("body http fixture /probe", out["http"], out)
                self.assertIn("echo probe-udp", out["udp"], out)
                self.assertIn("rcode 0 127.0.0.1", out["dns"], out)
                self.assertIn(("/probe", "allowed.dsh.test"), self.network.http.requests())
                self.assertEqual(self.network.udp.received(), [b"probe-udp"])
                self.assertIn("allowed.dsh.test", self.network.dns.names_queried(self.mark))
                self.assertFalse([line for line in out["env"] if line.split("=")[0] in PROXY_VARIABLES], out)
                self.assertEqual(result["refusedConnections"], [], brief(result))
                self.assertNotIn("refusedConnectionsDropped", brief(result))

    # -- off -----------------------------------------------------------------------------------------

    def test_off_reaches_nothing_on_the_host_loopback(self):
        http_port, tls_port, udp_port, dns_port = self.ports
        # Under bwrap, off with no local port is a network namespace of its own too (the second wall): its
        # loopback is the command's, so a connect there is performed and finds nobody (ECONNREFUSED, a
        # datagram sent into the void), with no record; under Landlock the supervisor refuses it (EACCES,
        # a record).  Either way the fixtures on the host's loopback see nothing, which is what is judged.
        private = self.backend == "bwrap"
        tcp_refused = ["errno ECONNREFUSED"] if private else ["errno EACCES"]
        udp_refused = ["sent"] if private else ["errno EACCES"]

        def body(mode):
            out, result = self.call(self.OFF, [
                self.probe("http", "http", "127.0.0.1", http_port),
                self.probe("tls", "connect", "127.0.0.1", tls_port),
                self.probe("fast-open", "fast-open", "127.0.0.1", http_port, "off"),
                self.probe("mapped", "connect6", "::ffff:127.0.0.1", http_port),
                self.probe("sendto", "udp", "127.0.0.1", udp_port, "sendto", "nowait"),
                self.probe("sendmsg", "udp", "127.0.0.1", udp_port, "sendmsg", "nowait"),
                self.probe("udp-connect", "udp", "127.0.0.1", udp_port, "connect", "nowait"),
                self.probe("sendmmsg", "sendmmsg", "127.0.0.1", udp_port),
                self.probe("dns-udp", "dns", "127.0.0.1", dns_port, "allowed.dsh.test", "A", "udp", "nowait"),
                self.probe("dns-tcp", "dns", "127.0.0.1", dns_port, "allowed.dsh.test", "A", "tcp"),
                self.probe("dns-53", "dns", SOME_RESOLVER, 53, "allowed.dsh.test", "A", "udp"),
                self.probe("resolve", "resolve", "allowed.dsh.test"),
                "echo '== env'; env"], mode=mode)
            for label in ("http", "tls", "mapped", "dns-tcp"):
                self.assertEqual(out[label], tcp_refused, f"{label}: {out}")
            self.assertEqual(out["fast-open"], tcp_refused, out)
            for label in ("sendto", "sendmsg", "udp-connect", "dns-udp"):
                self.assertEqual(out[label], udp_refused, f"{label}: {out}")
            self.assertEqual(out["sendmmsg"], ["sent 2"] if private else ["errno EACCES"], out)
            self.assertEqual(out["dns-53"], ["errno EACCES"], out)
            self.assertTrue(out["resolve"][0].startswith("gaierror"), out)
            self.assert_untouched()
            if not private:
                self.assert_record(result, "connect", "127.0.0.1", http_port, LOOPBACK_OFF)
                self.assert_record(result, "connect", "127.0.0.1", tls_port, LOOPBACK_OFF)
                self.assert_record(result, "connect", "127.0.0.1", udp_port, LOOPBACK_OFF)
            self.assert_record(result, "connect", SOME_RESOLVER, 53, "network-off")
            self.assertFalse([line for line in out["env"] if line.split("=")[0] in PROXY_VARIABLES], out)
        self.each_mode(body)

    def test_off_keeps_the_commands_own_servers(self):
        self.own_servers(self.OFF)

    def test_the_allow_list_keeps_the_commands_own_servers(self):
        self.own_servers(self.allow("allowed.dsh.test"))

    def own_servers(self, policy):
        out, result = self.call(policy, [self.probe("own", "own")])
        lines = dict(line.split(" ", 1) for line in out["own"])
        self.assertEqual(lines.get("own-tcp"), "reached bound 127.0.0.1", out)
        # A wildcard bind is bound on loopback: nothing outside can connect in and be answered.
        self.assertEqual(lines.get("own-tcp-wildcard"), "reached bound 127.0.0.1", out)
        self.assertEqual(lines.get("own-tcp6"), "reached bound ::1", out)
        self.assertEqual(lines.get("own-tcp6-wildcard"), "reached bound ::1", out)
        self.assertEqual(lines.get("own-udp"), "reached", out)
        # The kernel binds an unbound UDP socket's first send on every address: the supervisor binds it on
        # loopback first, or a datagram from outside could reach the command (an open port under off).
        self.assertEqual(lines.get("own-udp-sender"), "bound 127.0.0.1", out)
        self.assertEqual(lines.get("own-listen-unbound"), "bound 127.0.0.1", out)
        self.assertEqual(result["refusedConnections"], [], brief(result))
        self.assert_untouched()

    def listening_from_the_host(self, policy):
        """The command binds 0.0.0.0:0 and listens; returns (its line, whether the host reached it on
        loopback, whether on its other address), connecting while it still listens."""
        outside = host_address()
        argv = [BIN, "run", "--backend", self.backend, "--mode", "workspace-write", "--root", self.workspace,
                *policy, "--", "python3", self.probe_path, "listen", "0.0.0.0"]
        with subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env=self.env, cwd=self.workspace) as command:
            try:
                line = command.stdout.readline().strip()
                reached = {}
                if line.startswith("listening "):
                    port = int(line.split()[2])
                    for name, address in (("loopback", "127.0.0.1"), ("outside", outside)):
                        if address:
                            with socket.socket() as client:
                                client.settimeout(fixtures.PATIENCE)
                                reached[name] = client.connect_ex((address, port)) == 0
            finally:
                command.stdin.close()
                command.wait(timeout=PATIENCE)
            errors = command.stderr.read()
        return line, reached, errors

    def test_a_wildcard_bind_is_reachable_on_loopback_only(self):
        if host_address() is None:
            self.skipTest("this host has no address but loopback")
        for policy in (self.OFF, self.allow("allowed.dsh.test")):
            with self.subTest(policy=policy):
                line, reached, errors = self.listening_from_the_host(policy)
                self.assertRegex(line, r"^listening 127\.0\.0\.1 \d+$", errors)
                self.assertFalse(reached.get("outside"), f"{policy}: reached on {host_address()}")

    def test_allow_local_port_reaches_that_port_only(self):
        http_port, tls_port, udp_port, _ = self.ports
        out, result = self.call(("--allow-local-port", str(http_port)), [
            self.probe("http", "http", "127.0.0.1", http_port, "local", "/local-port"),
            self.probe("tls", "connect", "127.0.0.1", tls_port),
            self.probe("udp", "udp", "127.0.0.1", udp_port, "sendto"),
            self.curl("curl", f"http://127.0.0.1:{http_port}/curl-local")])
        self.assertIn("body http fixture /local-port", out["http"], out)
        self.assertIn("code 200", out["curl"], out)
        self.assertEqual(out["tls"], ["errno EACCES"], out)
        self.assertEqual(out["udp"], ["errno EACCES"], out)
        self.assertEqual(sorted(path for path, _ in self.network.http.requests()), ["/curl-local", "/local-port"])
        self.assertEqual(self.network.tls.accepted(), 0)
        self.assertEqual(self.network.udp.received(), [])
        self.assert_record(result, "connect", "127.0.0.1", tls_port, LOOPBACK_OFF)

    # -- the allow-list: what is allowed ---------------------------------------------------------------

    def test_curl_reaches_an_allowed_name_through_the_proxy(self):
        http_port, tls_port, _, _ = self.ports

        def body(mode):
            out, result = self.call(self.allow("allowed.dsh.test"), [
                self.curl("http", f"http://allowed.dsh.test:{http_port}/curl-http"),
                self.curl("https", f"https://allowed.dsh.test:{tls_port}/curl-https", "--cacert", self.network.cert),
                "echo '== env'; env"], mode=mode)
            self.assertIn("http fixture /curl-http", out["http"], out)
            self.assertIn("code 200", out["http"], out)
            self.assertIn("tls fixture GET /curl-https HTTP/1.1", out["https"], out)
            self.assertIn(("/curl-http", f"allowed.dsh.test:{http_port}"), self.network.http.requests())
            self.assertEqual(self.network.tls.handshakes(), ["allowed.dsh.test"])
            self.assertIn("allowed.dsh.test", self.network.dns.names_queried(self.mark))
            variables = dict(line.split("=", 1) for line in out["env"] if "=" in line)
            for name in PROXY_VARIABLES:
                self.assertRegex(variables.get(name, ""), r"^http://127\.0\.0\.1:\d+/?$", f"{name}: {variables}")
            self.assertEqual(variables.get("NO_PROXY"), "localhost,127.0.0.1,::1")
            self.assertEqual(variables.get("no_proxy"), "localhost,127.0.0.1,::1")
            self.assertIn("use-vc", variables.get("RES_OPTIONS", ""))
            self.assertEqual(result["refusedConnections"], [], brief(result))
        self.each_mode(body)

    def test_a_proxy_unaware_client_reaches_an_allowed_name(self):
        http_port, tls_port, _, _ = self.ports
        out, result = self.call(self.allow("allowed.dsh.test"), [
            self.probe("resolve", "resolve", "allowed.dsh.test", unaware=True),
            self.probe("http", "http", "allowed.dsh.test", http_port, "-", "/unaware-http", unaware=True),
            self.probe("tls", "tls", "allowed.dsh.test", tls_port, "allowed.dsh.test", self.network.cert,
                       "/unaware-tls", unaware=True),
            self.probe("fast-open", "fast-open", "allowed.dsh.test", http_port, f"allowed.dsh.test:{http_port}",
                       unaware=True),
            self.probe("mapped", "connect6", "::ffff:127.0.0.1", http_port, f"allowed.dsh.test:{http_port}",
                       unaware=True)])
        self.assertEqual(out["resolve"], ["addresses 127.0.0.1"], out)
        self.assertIn("body http fixture /unaware-http", out["http"], out)
        self.assertIn("body tls fixture GET /unaware-tls HTTP/1.1", out["tls"], out)
        self.assertIn("body http fixture /fast-open", out["fast-open"], out)
        # An IPv4-mapped address is judged by its IPv4 form (resolved above): captured like it.
        self.assertIn("body http fixture /mapped", out["mapped"], out)
        self.assertIn(("/unaware-http", f"allowed.dsh.test:{http_port}"), self.network.http.requests())
        self.assertIn(("/fast-open", f"allowed.dsh.test:{http_port}"), self.network.http.requests())
        self.assertEqual(self.network.tls.handshakes(), ["allowed.dsh.test"])
        self.assertIn("allowed.dsh.test", self.network.dns.names_queried(self.mark))
        self.assertEqual(result["refusedConnections"], [], brief(result))

    def test_other_dns_types_of_an_allowed_name_are_answered(self):
        # Kerberos and friends ask SRV and TXT: an allowed name's are forwarded, over UDP and TCP.
        out, result = self.call(self.allow("allowed.dsh.test"), [
            self.probe("udp", "dns", SOME_RESOLVER, 53, "allowed.dsh.test", "TXT", "udp"),
            self.probe("tcp", "dns", SOME_RESOLVER, 53, "allowed.dsh.test", "TXT", "tcp"),
            self.probe("a", "dns", SOME_RESOLVER, 53, "allowed.dsh.test", "A", "udp-connected")])
        self.assertIn("rcode 0 v=dsh-test", out["udp"], out)
        self.assertEqual(out["tcp"], ["rcode 0 v=dsh-test"], out)
        self.assertIn("rcode 0 127.0.0.1", out["a"], out)
        self.assertEqual(self.network.dns.queried(self.mark),
                         [("TXT", "allowed.dsh.test"), ("TXT", "allowed.dsh.test"), ("A", "allowed.dsh.test")])
        self.assertEqual(result["refusedConnections"], [], brief(result))

    # -- the allow-list: what is refused ---------------------------------------------------------------

    def test_a_denied_name_both_ways(self):
        http_port, tls_port, _, _ = self.ports

        def body(mode):
            out, result = self.call(self.allow("allowed.dsh.test"), [
                self.curl("curl-http", f"http://denied.dsh.test:{http_port}/denied"),
                self.curl("curl-https", f"https://denied.dsh.test:{tls_port}/denied", "--cacert", self.network.cert),
                self.probe("resolve", "resolve", "denied.dsh.test", unaware=True),
                self.probe("http", "http", "denied.dsh.test", http_port, unaware=True),
                self.probe("address", "http", "127.0.0.1", http_port, "denied.dsh.test", unaware=True),
                self.probe("fast-open", "fast-open", "127.0.0.1", http_port, "denied.dsh.test", unaware=True),
                self.probe("mapped", "connect6", "::ffff:127.0.0.1", tls_port, unaware=True)], mode=mode)
            self.assertIn("code 403", out["curl-http"], out)
            self.assertNotIn("http fixture", "\n".join(out["curl-http"]), out)
            self.assertNotIn("curl-exit 0", out["curl-https"], out)
            self.assertNotIn("tls fixture", "\n".join(out["curl-https"]), out)
            self.assertTrue(out["resolve"][0].startswith("gaierror"), out)
            self.assertTrue(out["http"][0].startswith("gaierror"), out)
            # An address the stub never gave out, for any name: refused at connect.
            self.assertEqual(out["address"], ["errno EACCES"], out)
            self.assertEqual(out["fast-open"], ["errno EACCES"], out)
            self.assertEqual(out["mapped"], ["errno EACCES"], out)
            self.assert_untouched()
            self.assert_record(result, "http", "denied.dsh.test", http_port, "host-not-allowed")
            self.assert_record(result, "http", "denied.dsh.test", tls_port, "host-not-allowed")
            self.assert_record(result, "dns", "denied.dsh.test", 53, "host-not-allowed")
            self.assert_record(result, "connect", "127.0.0.1", http_port, "address-not-resolved")
        self.each_mode(body)

    def test_a_denied_name_never_reaches_the_upstream(self):
        # DNS exfiltration: the name itself carries the data.  Asked every way a command can ask: its
        # resolver (glibc, TCP under RES_OPTIONS=use-vc), any address's port 53 over UDP, connected UDP
        # and TCP, and dnsmasq's own port directly, once an allowed name put its address in the book.
        _, _, _, dns_port = self.ports
        secret = "c2VjcmV0LXdvcmtzcGFjZQ"
        names = [f"{secret}.denied.dsh.test", f"{secret}.example.com", "denied.dsh.test"]
        steps = [self.probe("allowed", "resolve", "allowed.dsh.test")]
        for index, name in enumerate(names):
            steps += [self.probe(f"resolve-{index}", "resolve", name),
                      self.probe(f"udp-{index}", "dns", SOME_RESOLVER, 53, name, "A", "udp"),
                      self.probe(f"connected-{index}", "dns", SOME_RESOLVER, 53, name, "TXT", "udp-connected"),
                      self.probe(f"tcp-{index}", "dns", SOME_RESOLVER, 53, name, "AAAA", "tcp"),
                      self.probe(f"v6-{index}", "dns", "2001:db8::53", 53, name, "A", "udp"),
                      self.probe(f"upstream-udp-{index}", "dns", "127.0.0.1", dns_port, name, "A", "udp"),
                      self.probe(f"upstream-tcp-{index}", "dns", "127.0.0.1", dns_port, name, "A", "tcp")]
        out, result = self.call(self.allow("allowed.dsh.test"), steps)
        self.assertEqual(out["allowed"], ["addresses 127.0.0.1"], out)
        for index, name in enumerate(names):
            self.assertTrue(out[f"resolve-{index}"][0].startswith("gaierror"), out)
            for label in (f"udp-{index}", f"connected-{index}", f"tcp-{index}"):
                # REFUSED by the stub itself: an upstream's NXDOMAIN (3) would mean the name was asked.
                self.assertEqual(out.line(label, "rcode"), "rcode 5", f"{label}: {out}")
            self.assertEqual(out[f"upstream-udp-{index}"], ["errno EACCES"], out)
            self.assertNotIn("rcode 0", " ".join(out[f"v6-{index}"]), out)
            self.assertNotIn("rcode", " ".join(out[f"upstream-tcp-{index}"]), out)
            self.assert_record(result, "dns", name, 53, "host-not-allowed")
        self.assert_record(result, "connect", "127.0.0.1", dns_port, "protocol-not-allowed")
        asked = self.network.dns.names_queried(self.mark)
        self.assertEqual([name for name in asked if name != "allowed.dsh.test"], [], asked)
        self.assertFalse([name for name in asked if secret.lower() in name], asked)

    def test_an_ip_literal(self):
        http_port, tls_port, _, _ = self.ports
        out, result = self.call(self.allow(f"127.0.0.1:{http_port}"), [
            self.probe("allowed", "http", "127.0.0.1", http_port, "-", "/literal", unaware=True),
            self.curl("proxied", f"http://127.0.0.1:{http_port}/literal-proxied", "--noproxy", ""),
            self.probe("other-port", "connect", "127.0.0.1", tls_port, unaware=True),
            self.curl("other-port-proxied", f"http://127.0.0.1:{tls_port}/", "--noproxy", "")])
        self.assertIn("body http fixture /literal", out["allowed"], out)
        self.assertIn("code 200", out["proxied"], out)
        self.assertEqual(out["other-port"], ["errno EACCES"], out)
        self.assertIn("code 403", out["other-port-proxied"], out)
        self.assertEqual(sorted(path for path, _ in self.network.http.requests()), ["/literal", "/literal-proxied"])
        self.assertEqual(self.network.tls.accepted(), 0)
        self.assert_record(result, "connect", "127.0.0.1", tls_port, "address-not-resolved")
        self.assert_record(result, "http", "127.0.0.1", tls_port, "host-not-allowed")

    def test_an_ip_literal_not_allowed(self):
        http_port, tls_port, _, _ = self.ports
        out, result = self.call(self.allow("allowed.dsh.test"), [
            self.probe("http", "http", "127.0.0.1", http_port, "-", unaware=True),
            self.curl("proxied", f"http://127.0.0.1:{tls_port}/", "--noproxy", "")])
        self.assertEqual(out["http"], ["errno EACCES"], out)
        self.assertIn("code 403", out["proxied"], out)
        self.assert_untouched()
        self.assert_record(result, "connect", "127.0.0.1", http_port, "address-not-resolved")
        self.assert_record(result, "http", "127.0.0.1", tls_port, "host-not-allowed")

    def test_a_denied_name_on_an_allowed_destination(self):
        # The address is allowed.dsh.test's (resolved first): what names the host on the wire decides.
        http_port, tls_port, _, _ = self.ports
        cert = self.network.cert
        out, result = self.call(self.allow("allowed.dsh.test"), [
            self.probe("sni", "tls", "allowed.dsh.test", tls_port, "denied.dsh.test", cert, unaware=True),
            self.probe("no-sni", "tls", "allowed.dsh.test", tls_port, "-", cert, unaware=True),
            self.probe("host", "http", "allowed.dsh.test", http_port, "denied.dsh.test", unaware=True)])
        for label in ("sni", "no-sni", "host"):
            self.assertNotIn("handshake", out[label], out)
            self.assertFalse([line for line in out[label] if line.startswith(("status", "body"))], out)
        # The proxy decides before it connects anywhere: neither fixture saw a connection.
        self.assertEqual(self.network.http.accepted(), 0, self.network.http.requests())
        self.assertEqual(self.network.tls.accepted(), 0, self.network.tls.first_bytes())
        self.assertNotIn("denied.dsh.test", self.network.dns.names_queried(self.mark))
        self.assert_record(result, "connect", "denied.dsh.test", tls_port, "host-not-allowed")
        self.assert_record(result, "connect", "denied.dsh.test", http_port, "host-not-allowed")

    def test_an_sni_naming_a_denied_host_in_an_allowed_tunnel(self):
        _, tls_port, _, _ = self.ports
        cert = self.network.cert
        out, result = self.call(self.allow("allowed.dsh.test"), [
            self.probe("sni", "proxy-connect", f"allowed.dsh.test:{tls_port}", "tls", "denied.dsh.test", cert),
            self.probe("no-sni", "proxy-connect", f"allowed.dsh.test:{tls_port}", "tls", "-", cert),
            self.probe("good", "proxy-connect", f"allowed.dsh.test:{tls_port}", "tls", "allowed.dsh.test", cert)])
        for label in ("sni", "no-sni"):
            self.assertRegex(out.line(label, "proxy") or "", r"^proxy HTTP/1\.[01] 200", out)
            self.assertNotIn("handshake", out[label], out)
        self.assertIn("handshake", out["good"], out)
        self.assertEqual(self.network.tls.handshakes(), ["allowed.dsh.test"])
        self.assertFalse([first for first in self.network.tls.first_bytes() if b"denied" in first])
        # Two refusals; one record when both name the same host (a record the same as the last is not repeated).
        self.assertIn(len([r for r in result["refusedConnections"]
                           if r["rule"] == "sni-mismatch" and r["port"] == tls_port]), (1, 2), brief(result))

    def test_a_relayed_connect(self):
        http_port, tls_port, _, _ = self.ports
        out, result = self.call(self.allow("allowed.dsh.test"), [
            self.probe("relayed", "proxy-connect", f"allowed.dsh.test:{tls_port}", "connect",
                       f"denied.dsh.test:{http_port}"),
            self.probe("raw", "proxy-connect", f"allowed.dsh.test:{tls_port}", "raw")])
        for label in ("relayed", "raw"):
            self.assertRegex(out.line(label, "proxy") or "", r"^proxy HTTP/1\.[01] 200", out)
        self.assertNotRegex(out.line("relayed", "inner") or "", r"200", out)
        self.assertEqual(self.network.http.accepted(), 0)
        self.assertEqual(self.network.tls.handshakes(), [])
        self.assertFalse([first for first in self.network.tls.first_bytes() if first[:1] not in (b"", b"\x16")],
                         self.network.tls.first_bytes())
        self.assertNotIn("denied.dsh.test", self.network.dns.names_queried(self.mark))
        refused = [r for r in result["refusedConnections"] if r["port"] == tls_port
                   and r["rule"] in ("sni-mismatch", "protocol-not-allowed")]
        self.assertIn(len(refused), (1, 2), brief(result))

    def test_plain_http_is_filtered_too(self):
        # Not only CONNECT: an absolute-URI request for a denied host is refused before anything is asked.
        http_port, _, _, _ = self.ports
        out, result = self.call(self.allow("allowed.dsh.test"), [
            self.curl("denied", f"http://denied.dsh.test:{http_port}/plain"),
            self.curl("allowed", f"http://allowed.dsh.test:{http_port}/plain")])
        self.assertIn("code 403", out["denied"], out)
        self.assertIn("code 200", out["allowed"], out)
        self.assertEqual(self.network.http.requests(), [("/plain", f"allowed.dsh.test:{http_port}")])
        self.assertEqual(set(self.network.dns.names_queried(self.mark)), {"allowed.dsh.test"})
        self.assert_record(result, "http", "denied.dsh.test", http_port, "host-not-allowed")

    def test_udp_to_a_non_dns_port(self):
        _, _, udp_port, _ = self.ports
        out, result = self.call(self.allow("allowed.dsh.test"), [
            self.probe("resolve", "resolve", "allowed.dsh.test"),
            self.probe("sendto", "udp", "127.0.0.1", udp_port, "sendto"),
            self.probe("sendmsg", "udp", "127.0.0.1", udp_port, "sendmsg"),
            self.probe("connect", "udp", "127.0.0.1", udp_port, "connect"),
            self.probe("sendmmsg", "sendmmsg", "127.0.0.1", udp_port)])
        self.assertEqual(out["resolve"], ["addresses 127.0.0.1"], out)
        for label in ("sendto", "sendmsg", "connect", "sendmmsg"):
            self.assertEqual(out[label], ["errno EACCES"], f"{label}: {out}")
        self.assertEqual(self.network.udp.received(), [])
        self.assert_record(result, "connect", "127.0.0.1", udp_port, "protocol-not-allowed")

    def test_a_metadata_address(self):
        out, result = self.call(self.allow("allowed.dsh.test", "meta.dsh.test", "meta6.dsh.test", "mapped.dsh.test",
                                           "zero.dsh.test"), [
            self.probe("resolve", "resolve", "meta.dsh.test"),
            self.probe("zero", "dns", SOME_RESOLVER, 53, "zero.dsh.test", "A", "udp"),
            self.probe("a", "dns", SOME_RESOLVER, 53, "meta.dsh.test", "A", "udp"),
            self.probe("aaaa", "dns", SOME_RESOLVER, 53, "meta6.dsh.test", "AAAA", "tcp"),
            self.probe("mapped", "dns", SOME_RESOLVER, 53, "mapped.dsh.test", "AAAA", "udp"),
            self.probe("literal", "connect", "169.254.169.254", 80, unaware=True),
            self.curl("curl-literal", "http://169.254.169.254/latest/meta-data/"),
            self.curl("curl-name", "http://meta.dsh.test/latest/meta-data/")])
        self.assertTrue(out["resolve"][0].startswith("gaierror"), out)
        for label in ("a", "aaaa", "mapped", "zero"):
            self.assertEqual(out.line(label, "rcode"), "rcode 5", f"{label}: {out}")
        self.assertEqual(out["literal"], ["errno EACCES"], out)
        self.assertIn("code 403", out["curl-literal"], out)
        self.assertIn("code 403", out["curl-name"], out)
        self.assert_record(result, "dns", "meta.dsh.test", 53, "metadata-address")
        self.assert_record(result, "dns", "meta6.dsh.test", 53, "metadata-address")
        self.assert_record(result, "dns", "mapped.dsh.test", 53, "metadata-address")
        self.assert_record(result, "dns", "zero.dsh.test", 53, "metadata-address")
        self.assert_record(result, "connect", "169.254.169.254", 80, ("metadata-address", "address-not-resolved"))
        self.assert_record(result, "http", "169.254.169.254", 80, ("metadata-address", "host-not-allowed"))
        self.assert_record(result, "http", "meta.dsh.test", 80, "metadata-address")

    def test_a_metadata_address_an_entry_names(self):
        out, result = self.call(self.allow("meta.dsh.test", "169.254.169.254"), [
            self.probe("resolve", "resolve", "meta.dsh.test", "4")])
        self.assertEqual(out["resolve"], ["addresses 169.254.169.254"], out)
        self.assertEqual(result["refusedConnections"], [], brief(result))

    def test_an_allowed_name_on_an_address_given_out_for_another(self):
        # Domain fronting: far.dsh.test is allowed, but 127.0.0.1 was given out for allowed.dsh.test, not for
        # it; the captured connection must be refused although both names are allowed.
        http_port, tls_port, _, _ = self.ports
        cert = self.network.cert
        out, result = self.call(self.allow("allowed.dsh.test", "far.dsh.test"), [
            self.probe("resolve", "resolve", "allowed.dsh.test", unaware=True),
            self.probe("far", "resolve", "far.dsh.test", unaware=True),
            self.probe("host", "http", "127.0.0.1", http_port, "far.dsh.test", unaware=True),
            self.probe("sni", "tls", "allowed.dsh.test", tls_port, "far.dsh.test", cert, unaware=True)])
        self.assertEqual(out["resolve"], ["addresses 127.0.0.1"], out)
        self.assertEqual(out["far"], ["addresses 127.0.0.2"], out)
        for label in ("host", "sni"):
            self.assertFalse([line for line in out[label] if line.startswith(("handshake", "status", "body"))], out)
        self.assertEqual(self.network.http.accepted(), 0, self.network.http.requests())
        self.assertEqual(self.network.tls.accepted(), 0)
        self.assert_record(result, "connect", "far.dsh.test", http_port, "address-not-resolved")
        self.assert_record(result, "connect", "far.dsh.test", tls_port, "address-not-resolved")

    def test_the_uri_decides_not_the_host_header(self):
        http_port, _, _, _ = self.ports
        out, result = self.call(self.allow("allowed.dsh.test"), [
            self.probe("denied-uri", "proxy-get", f"http://denied.dsh.test:{http_port}/smuggled",
                       f"allowed.dsh.test:{http_port}")])
        self.assertRegex(out.line("denied-uri", "status") or "", r"^status HTTP/1\.[01] 403", out)
        self.assertEqual(self.network.http.accepted(), 0, self.network.http.requests())
        self.assertNotIn("denied.dsh.test", self.network.dns.names_queried(self.mark))
        self.assert_record(result, "http", "denied.dsh.test", http_port, "host-not-allowed")

    def test_a_port_in_an_entry(self):
        http_port, tls_port, _, _ = self.ports
        out, result = self.call(self.allow(f"allowed.dsh.test:{tls_port}"), [
            self.curl("other-port", f"http://allowed.dsh.test:{http_port}/port"),
            self.probe("captured", "http", "allowed.dsh.test", http_port, unaware=True),
            self.curl("its-port", f"https://allowed.dsh.test:{tls_port}/port", "--cacert", self.network.cert)])
        self.assertIn("code 403", out["other-port"], out)
        self.assertFalse([line for line in out["captured"] if line.startswith(("status", "body"))], out)
        self.assertIn("tls fixture GET /port HTTP/1.1", out["its-port"], out)
        self.assertEqual(self.network.http.accepted(), 0, self.network.http.requests())
        self.assertEqual(self.network.tls.handshakes(), ["allowed.dsh.test"])
        self.assert_record(result, "http", "allowed.dsh.test", http_port, "host-not-allowed")
        self.assert_record(result, "connect", "allowed.dsh.test", http_port, "host-not-allowed")

    # -- every policy that is not on -------------------------------------------------------------------

    def test_io_uring_is_refused(self):
        for policy in (self.OFF, self.allow("allowed.dsh.test")):
            with self.subTest(policy=policy):
                out, _ = self.call(policy, [self.probe("ring", "io_uring")])
                self.assertEqual(out["ring"], ["io_uring EPERM"], out)

    def test_socket_families_are_limited(self):
        made = ("tcp", "tcp-flags", "tcp-explicit", "udp", "udp-explicit", "tcp6", "udp6", "unix", "netlink-route")
        protocol = ("raw-icmp", "raw-tcp", "raw6", "ping", "sctp", "mptcp", "seqpacket-inet")
        family = ("packet", "packet-dgram", "vsock", "alg")
        for policy in (self.OFF, self.allow("allowed.dsh.test")):
            with self.subTest(policy=policy):
                out, _ = self.call(policy, [self.probe("families", "families")])
                lines = dict(line.split(" ", 1) for line in out["families"])
                for kind in made:
                    self.assertEqual(lines.get(kind), "made", f"{kind}: {out}")
                for kind in protocol:
                    self.assertEqual(lines.get(kind), "EPROTONOSUPPORT", f"{kind}: {out}")
                for kind in family:
                    self.assertEqual(lines.get(kind), "EAFNOSUPPORT", f"{kind}: {out}")
                for kind in ("netlink-audit", "netlink-netfilter"):
                    self.assertIn(lines.get(kind), ("EAFNOSUPPORT", "EPROTONOSUPPORT"), f"{kind}: {out}")


class FrontEnds(unittest.TestCase):
    """The policy as each front end carries it — the config's `network`, serve's `network` param, mcp's
    flags — judged by what reaches the fixtures; bad input; danger-full-access.  On the first backend
    this host has (the enforcement per backend is NetworkReach's)."""
    place = None
    network = None

    @classmethod
    def setUpClass(cls):
        if not backends():
            raise unittest.SkipTest("neither Landlock nor bwrap can confine on this host")
        if fixtures.missing_tools():
            raise unittest.SkipTest(f"no {', '.join(fixtures.missing_tools())} (scripts/ensure-deps.sh installs them)")
        os.makedirs(livability.SCRATCH, exist_ok=True)
        cls.place = tempfile.mkdtemp(prefix="reach-network-front-", dir=livability.SCRATCH)
        os.chmod(cls.place, 0o755)
        cls.network = fixtures.Fixtures(cls.place)
        cls.backend = backends()[0]

    @classmethod
    def tearDownClass(cls):
        if cls.network:
            cls.network.close()
        if cls.place:
            shutil.rmtree(cls.place, ignore_errors=True)

    def setUp(self):
        self.network.clear()
        self.workspace = tempfile.mkdtemp(prefix="workspace-", dir=self.place)
        self.addCleanup(shutil.rmtree, self.workspace, True)
        self.env = dict(os.environ, HOME=self.workspace, XDG_CONFIG_HOME=os.path.join(self.workspace, ".config"),
                        XDG_STATE_HOME=os.path.join(self.workspace, ".state"),
                        XDG_CACHE_HOME=os.path.join(self.workspace, ".cache"),
                        DSH_SANDBOX_STATE_DIR=os.path.join(self.workspace, ".state"))
        for name in PROXY_VARIABLES + ("NO_PROXY", "no_proxy", "DSH_SANDBOX_CONFIG", "RES_OPTIONS"):
            self.env.pop(name, None)
        self.canary = os.path.join(self.workspace, "ran")

    @property
    def allow_list(self):
        return {"allowHosts": ["allowed.dsh.test"], "dnsUpstream": self.network.dns.upstream}

    def http_command(self, host="127.0.0.1"):
        """A shell command: curl to the HTTP fixture (by `host`), its status code printed."""
        return (f"curl -sS --max-time 20 -o /dev/null -w 'code %{{http_code}}\\n' "
                f"http://{host}:{self.network.http.port}/front 2>&1; true")

    def config(self, network):
        path = os.path.join(self.workspace, "config.json")
        with open(path, "w", encoding="utf-8") as handle:
            json.dump({"network": network}, handle)
        return path

    def bash_json(self, *arguments):
        done = subprocess.run([BIN, "bash", *arguments], capture_output=True, text=True, check=False, env=self.env,
                              cwd=self.workspace, timeout=PATIENCE)
        self.assertEqual(done.returncode, 0, done.stderr)
        return json.loads(done.stdout)

    def test_the_configs_network_is_every_calls_default(self):
        policy = ["--backend", self.backend, "--mode", "workspace-write", "--root", self.workspace]
        config = self.config("off")
        result = self.bash_json("--config", config, *policy, "--json", "--", self.http_command())
        self.assertNotIn("code 200", result["stdout"]["text"], brief(result))
        self.network.settle()
        self.assertEqual(self.network.http.accepted(), 0)
        self.assertTrue([r for r in result["refusedConnections"] if r["port"] == self.network.http.port], brief(result))
        # A call's own network replaces the config's whole.
        result = self.bash_json("--config", config, *policy, "--network", "on", "--json", "--", self.http_command())
        self.assertIn("code 200", result["stdout"]["text"], brief(result))
        self.network.settle()
        self.assertEqual(self.network.http.accepted(), 1)
        config = self.config(self.allow_list)
        result = self.bash_json("--config", config, *policy, "--json", "--",
                                self.http_command("allowed.dsh.test") + "; " + self.http_command("denied.dsh.test"))
        self.assertEqual(result["stdout"]["text"].split(), ["code", "200", "code", "403"], brief(result))
        self.network.settle()
        self.assertEqual([host for _, host in self.network.http.requests()][-1:],
                         [f"allowed.dsh.test:{self.network.http.port}"])
        self.assertNotIn("denied.dsh.test", self.network.dns.names_queried())

    def test_serve_bash_run_carries_the_network(self):
        base = {"mode": "workspace-write", "root": self.workspace, "backend": self.backend}
        calls = [dict(base, network="off", command=self.http_command()),
                 dict(base, network=self.allow_list, command=self.http_command("allowed.dsh.test"))]
        answers = []
        with subprocess.Popen([BIN, "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, env=self.env, cwd=self.workspace) as server:
            for number, params in enumerate(calls, start=1):
                server.stdin.write(json.dumps({"jsonrpc": "2.0", "id": number, "method": "bash.run",
                                               "params": params}) + "\n")
                server.stdin.flush()
                answers.append(json.loads(server.stdout.readline()))
                if number == 1:
                    self.network.settle()
                    self.assertEqual(self.network.http.accepted(), 0, answers[0])
            server.stdin.close()
            server.wait(timeout=PATIENCE)
        off, allowed = (answer.get("result", answer) for answer in answers)
        self.assertTrue([r for r in off.get("refusedConnections", []) if (r["op"], r["host"], r["port"]) ==
                         ("connect", "127.0.0.1", self.network.http.port) and r["rule"] in LOOPBACK_OFF], off)
        self.assertIn("code 200", allowed["stdout"]["text"], allowed)
        self.assertEqual(allowed["refusedConnections"], [], allowed)
        self.network.settle()
        self.assertEqual(self.network.http.accepted(), 1)

    def test_mcp_flags_carry_the_network(self):
        opening = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
                    "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                               "clientInfo": {"name": "test", "version": "0"}}},
                   {"jsonrpc": "2.0", "method": "notifications/initialized"},
                   {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                    "params": {"name": "bash", "arguments": {"command": self.http_command()}}}]
        answer = None
        with subprocess.Popen([BIN, "mcp", "--backend", self.backend, "--mode", "workspace-write", "--root",
                               self.workspace, "--network", "off"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=self.env) as server:
            server.stdin.write("".join(json.dumps(message) + "\n" for message in opening))
            server.stdin.flush()
            for line in server.stdout:
                message = json.loads(line)
                if message.get("id") == 2:
                    answer = message
                    break
            server.stdin.close()
            server.wait(timeout=PATIENCE)
            errors = server.stderr.read()
        self.assertIsNotNone(answer, errors)
        content = answer["result"]["structuredContent"]
        self.assertTrue([r for r in content["refusedConnections"] if (r["op"], r["host"], r["port"]) ==
                         ("connect", "127.0.0.1", self.network.http.port) and r["rule"] in LOOPBACK_OFF], content)
        self.network.settle()
        self.assertEqual(self.network.http.accepted(), 0)

    def test_danger_full_access_holds_no_network_policy(self):
        for policy in (("--network", "off"), ("--allow-host", "allowed.dsh.test")):
            with self.subTest(policy=policy):
                done = subprocess.run([BIN, "run", "--backend", self.backend, "--mode", "danger-full-access",
                                       "--root", self.workspace, *policy, "--", "touch", self.canary],
                                      capture_output=True, text=True, check=False, env=self.env, timeout=PATIENCE)
                self.assertEqual(done.returncode, 125, done.stderr)
                self.assertIn("danger-full-access confines nothing", done.stderr)
                self.assertFalse(os.path.exists(self.canary), "the command ran")

    def test_bad_input_is_one_line_and_runs_nothing(self):
        cases = [(("--allow-host", "*"), '"*"'),
                 (("--allow-host", "com"), '"com"'),
                 (("--allow-host", "https://allowed.dsh.test/"), "https://allowed.dsh.test/"),
                 (("--allow-host", "allowed.dsh.test", "--network", "off"), "--allow-host"),
                 (("--allow-local-port", "0"), "0"),
                 (("--allow-local-port", "65536"), "65536"),
                 (("--allow-local-port", "8080", "--network", "on"), "--allow-local-port"),
                 (("--network", "sideways"), "sideways"),
                 (("--allow-host", "allowed.dsh.test", "--dns-upstream", "resolver"), "resolver")]
        for arguments, named in cases:
            with self.subTest(arguments=arguments):
                done = subprocess.run([BIN, "run", "--backend", self.backend, "--root", self.workspace, *arguments,
                                       "--", "touch", self.canary], capture_output=True, text=True, check=False,
                                      env=self.env, timeout=PATIENCE)
                self.assertEqual(done.returncode, 2, done.stderr)
                self.assertEqual(len(done.stderr.strip().splitlines()), 1, done.stderr)
                self.assertIn(named, done.stderr)
                self.assertFalse(os.path.exists(self.canary), "the command ran")


class LandlockNetworkReach(NetworkReach, unittest.TestCase):
    backend = "landlock"


class BwrapNetworkReach(NetworkReach, unittest.TestCase):
    backend = "bwrap"


if __name__ == "__main__":
    sys.exit(livability.run_suite(__name__))
