#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The records the enforcing layers write where they used to refuse in silence (issue 23, part A).

Each case runs the built `dsh-sandbox bash --json` ($DSH_SANDBOX_BIN) on the real kernel with real
bwrap, once per backend (and per confined mode where both refuse), and judges both sides: the record
in the result, exactly, and the effect on the other side — the daemon saw no client, the file on disk
kept its mode, owner, times and attributes, the loopback server accepted nothing.

- a daemon socket (a unix stream server the test starts beneath no writable root: a fake
  docker.sock), reached directly and through a symlink in the workspace: refused (EACCES), the
  daemon saw nothing, and `refusedWrites` holds {op "connect", path: the socket as resolved,
  rule "unix-socket"};
- an abstract socket: refused, nothing reached, {op "connect", path "@name", rule "abstract-socket"};
- a socket in a masked directory of the workspace (workspace-write: it lies in a root): never
  reached; under Landlock its record keeps the mask's rule ("masked-path", no grant), under bwrap
  the command finds nothing there;
- a socket in the command's own workspace is reached under workspace-write, with no record (the
  cases above could not pass by recording every connect);
- under read-only, chmod, chown, utimes and setxattr beneath no writable root: refused (Landlock:
  EPERM, the errno the command always saw there), the file unchanged, one record each
  {op, path, rule "outside-roots"} — Landlock's metadata filter refused them without a record before;
- the network records name their layer: under `--network off` a connect to the host's own address is
  the supervisor's ({op "connect", ..., rule "network-off", source "supervisor"}, the server
  accepted nothing); under an
  allow-list a DNS query for a name not allowed and a proxied request for it are the proxy's
  (source "proxy").

The paths a call moves aside (dsh_child_moved_aside_paths()) have no surface of their own in
`bash --json` (part B turns them into denials): tests/integration/test-refusal-records.c checks
them on both backends.  Records are compared after keeping only those about this test's own paths:
the shell's own (bash opens /dev/tty as it starts) are tests/reach/test_refusal_records.py's.

Output is unittest's verbose form on stdout, one line per case, then "N passed, N failed,
N skipped" (a "# SKIP: case: reason" line for each skip).
"""
import errno
import json
import os
import shlex
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "livability"))
sys.path.insert(0, HERE)
from livability import BIN, SCRATCH, bwrap_works, landlock_abi, run_suite  # noqa: E402
from test_network import host_address  # noqa: E402
from test_sockets import CONNECT, Daemon  # noqa: E402

# A bound on a run that hangs, never a measurement.
PATIENCE = 120
BACKENDS = [name for name, usable in (("landlock", landlock_abi() > 0), ("bwrap", bwrap_works())) if usable]
MODES = ("workspace-write", "read-only")
PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy",
                   "NO_PROXY", "no_proxy")

# Each metadata change the command tries, one line each: "NAME ok" or "NAME ERRNO".
METADATA = """
import errno, os, sys
target = sys.argv[1]
def attempt(name, change):
    try:
        change(); print(name, "ok")
    except OSError as error:
        print(name, errno.errorcode.get(error.errno, str(error.errno)))
attempt("chmod", lambda: os.chmod(target, 0o600))
attempt("chown", lambda: os.chown(target, 1, 1))
attempt("utimes", lambda: os.utime(target, (1000000000, 1000000000)))
attempt("setxattr", lambda: os.setxattr(target, "user.dsh", b"planted"))
"""

# A TCP connect to ADDRESS:PORT, then a name looked up: "connect ERRNO|connected", "lookup failed|NAME".
NETWORK = """
import socket, sys
client = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
try:
    client.connect((sys.argv[1], int(sys.argv[2]))); print("connect connected")
except OSError as error:
    print("connect", error.errno)
try:
    socket.getaddrinfo(sys.argv[3], 80, socket.AF_INET, socket.SOCK_STREAM); print("lookup", sys.argv[3])
except OSError:
    print("lookup failed")
"""


class HostServer(Daemon):
    """A TCP server on every address of the host that records each client on disk (test_sockets.Daemon's)."""

    def __init__(self, canary):  # pylint: disable=super-init-not-called
        self.canary = canary
        self.server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.server.bind(("0.0.0.0", 0))
        self.server.listen(16)
        self.port = self.server.getsockname()[1]
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()


def file_facts(path):
    """What a metadata change would alter: mode, owner, times, the attribute."""
    status = os.lstat(path)
    try:
        attribute = os.getxattr(path, "user.dsh")
    except OSError:
        attribute = None
    return (stat.S_IMODE(status.st_mode), status.st_uid, status.st_gid, status.st_mtime_ns, attribute)


class DenialRecords(unittest.TestCase):
    def setUp(self):
        if not BACKENDS:
            self.skipTest("neither Landlock nor bwrap can confine on this host")
        os.makedirs(SCRATCH, exist_ok=True)
        self.home = tempfile.mkdtemp(prefix="denial-records-", dir=SCRATCH)
        os.chmod(self.home, 0o755)
        self.workspace = os.path.join(self.home, "workspace")
        self.outside = os.path.join(self.home, "outside")
        os.makedirs(self.workspace)
        os.makedirs(self.outside)
        self.scripts = {}
        for name, text in (("connect", CONNECT), ("metadata", METADATA), ("network", NETWORK)):
            self.scripts[name] = os.path.join(self.home, f"{name}.py")
            with open(self.scripts[name], "w", encoding="utf-8") as handle:
                handle.write(text)
        self.env = dict(os.environ, HOME=self.home, XDG_CONFIG_HOME=os.path.join(self.home, "config"),
                        XDG_STATE_HOME=os.path.join(self.home, "state"),
                        XDG_CACHE_HOME=os.path.join(self.home, "cache"),
                        DSH_SANDBOX_STATE_DIR=os.path.join(self.home, "state"))
        for name in PROXY_VARIABLES + ("DSH_SANDBOX_CONFIG",):
            self.env.pop(name, None)

    def tearDown(self):
        shutil.rmtree(self.home, ignore_errors=True)

    def bash_json(self, backend, mode, command, *policy):
        """`dsh-sandbox bash --json` as a harness runs it, in the workspace; the result object."""
        done = subprocess.run([BIN, "bash", "--backend", backend, "--mode", mode, "--root", self.workspace, *policy,
                               "--json", "--", command], capture_output=True, text=True, check=False,
                              env=self.env, cwd=self.workspace, timeout=PATIENCE)
        self.assertEqual(done.returncode, 0, done.stderr)
        result = json.loads(done.stdout)
        self.assertEqual(result["sandbox"]["backend"], backend, result)
        return result

    def own_records(self, result):
        """The write records about this test's own paths (and abstract names), in order."""
        return [record for record in result["refusedWrites"]
                if record["path"].startswith(self.home + "/") or record["path"].startswith("@")]

    def python(self, script, *arguments):
        return shlex.join(["python3", self.scripts[script], *map(str, arguments)])

    def daemon(self, address):
        canary = os.path.join(self.home, f"canary-{len(os.listdir(self.home))}")
        server = Daemon(address, canary)
        self.addCleanup(server.close)
        return server

    # -- unix sockets ---------------------------------------------------------------------------------

    def test_daemon_socket_is_refused_and_recorded(self):
        path = os.path.join(self.outside, "docker.sock")
        server = self.daemon(path)
        link = os.path.join(self.workspace, "docker.sock")
        os.symlink(path, link)
        for backend in BACKENDS:
            for mode in MODES:
                with self.subTest(backend=backend, mode=mode):
                    result = self.bash_json(backend, mode, f"{self.python('connect', 'unix', path)}; "
                                                           f"{self.python('connect', 'unix', 'docker.sock')}")
                    self.assertEqual(result["stdout"]["text"].split("\n"), ["errno 13", "errno 13", ""], result)
                    self.assertFalse(server.reached(), "the daemon saw a client")
                    # Through the link as directly: the socket as the supervisor resolved it, kept once.
                    self.assertEqual(self.own_records(result),
                                     [{"op": "connect", "path": path, "rule": "unix-socket"}], result)

    def test_abstract_socket_is_refused_and_recorded(self):
        name = f"@dsh-denial-records-{os.getpid()}"
        server = self.daemon(name)
        for backend in BACKENDS:
            for mode in MODES:
                with self.subTest(backend=backend, mode=mode):
                    result = self.bash_json(backend, mode, self.python("connect", "unix", name))
                    self.assertEqual(result["stdout"]["text"], "errno 13\n", result)
                    self.assertFalse(server.reached(), "the abstract daemon saw a client")
                    self.assertEqual(self.own_records(result),
                                     [{"op": "connect", "path": name, "rule": "abstract-socket"}], result)

    def test_masked_socket_keeps_the_masks_rule(self):
        # A socket in a masked directory of the workspace (an agent's socket among the secrets): never
        # reached, and its record, where there is one, says "masked-path", whose grant is none — never
        # "unix-socket", which would point the model at allow-listing it.  (A masked socket beneath no
        # root — under read-only, the workspace's too — is recorded "unix-socket": the supervisor
        # holds back only what lies in the roots, and the grant for it is dsh_denial_find_grant()'s
        # to refuse.)
        secrets = os.path.join(self.workspace, "secrets")
        os.makedirs(secrets)
        path = os.path.join(secrets, "agent.sock")
        server = self.daemon(path)
        for backend in BACKENDS:
            for mode in ("workspace-write",):
                with self.subTest(backend=backend, mode=mode):
                    result = self.bash_json(backend, mode, self.python("connect", "unix", path), "--mask", secrets)
                    self.assertRegex(result["stdout"]["text"], r"^errno \d+\n$", result)
                    self.assertFalse(server.reached(), "the masked daemon saw a client")
                    records = self.own_records(result)
                    if backend == "landlock":
                        # The supervisor opens it outside the domain, and refuses it by the mask's rule.
                        self.assertEqual(result["stdout"]["text"], "errno 13\n", result)
                        self.assertEqual(records, [{"op": "connect", "path": path, "rule": "masked-path"}], result)
                    else:
                        # bwrap covers the directory: the command finds no socket there to be refused.
                        self.assertEqual(records, [], result)

    def test_own_socket_is_reached_without_record(self):
        path = os.path.join(self.workspace, "own.sock")
        server = self.daemon(path)
        for backend in BACKENDS:
            with self.subTest(backend=backend):
                result = self.bash_json(backend, "workspace-write", self.python("connect", "unix", path))
                self.assertEqual(result["stdout"]["text"], "connected hi\n", result)
                self.assertTrue(server.reached())
                self.assertEqual(self.own_records(result), [], result)

    # -- metadata under read-only ---------------------------------------------------------------------

    def test_read_only_metadata_changes_are_refused_and_recorded(self):
        target = os.path.join(self.outside, "kept")
        with open(target, "w", encoding="utf-8") as handle:
            handle.write("kept\n")
        os.chmod(target, 0o644)
        before = file_facts(target)
        changes = ("chmod", "chown", "utimes", "setxattr")
        for backend in BACKENDS:
            with self.subTest(backend=backend):
                result = self.bash_json(backend, "read-only", self.python("metadata", target))
                outcomes = dict(line.split(" ", 1) for line in result["stdout"]["text"].splitlines())
                self.assertEqual(set(outcomes), set(changes), result)
                for change in changes:
                    self.assertNotEqual(outcomes[change], "ok", result)
                if backend == "landlock":
                    # The errno the command saw when the filter refused by itself: unchanged.
                    self.assertEqual(outcomes, {change: errno.errorcode[errno.EPERM] for change in changes}, result)
                self.assertEqual(file_facts(target), before, "a refused change reached the disk")
                self.assertEqual(self.own_records(result),
                                 [{"op": change, "path": target, "rule": "outside-roots"} for change in changes],
                                 result)

    # -- the network records' source ------------------------------------------------------------------

    def test_network_records_name_their_source(self):
        # The host's own address, not its loopback: bwrap gives the command a loopback of its own.
        address = host_address()
        if not address:
            self.skipTest("this host has no IPv4 address but loopback")
        server = HostServer(os.path.join(self.home, "tcp-canary"))
        self.addCleanup(server.close)
        denied = "denied.dsh.test"
        for backend in BACKENDS:
            with self.subTest(backend=backend, policy="off"):
                result = self.bash_json(backend, "workspace-write",
                                        self.python("network", address, server.port, denied), "--network", "off")
                self.assertEqual(result["stdout"]["text"].splitlines()[0], f"connect {errno.EACCES}", result)
                self.assertFalse(server.reached(), "the host's server accepted a connection")
                connects = [record for record in result["refusedConnections"] if record["op"] == "connect"
                            and record["host"] == address and record["port"] == server.port]
                self.assertEqual(len(connects), 1, result)
                self.assertEqual(connects[0]["rule"], "network-off", result)
                self.assertEqual(connects[0]["source"], "supervisor", result)
            with self.subTest(backend=backend, policy="allow-list"):
                # Nothing listens on the upstream: a name not allowed is refused without asking it.
                policy = ("--allow-host", "allowed.dsh.test", "--dns-upstream", "127.0.0.1:9")
                command = (f"{self.python('network', address, server.port, denied)}; "
                           f"curl -sS --max-time 20 -o /dev/null http://{denied}/ 2>/dev/null; echo \"curl $?\"")
                result = self.bash_json(backend, "workspace-write", command, *policy)
                self.assertIn("lookup failed", result["stdout"]["text"], result)
                self.assertFalse(server.reached(), "the host's server accepted a connection")
                records = [(record["op"], record["host"].lower(), record["rule"], record["source"])
                           for record in result["refusedConnections"]]
                self.assertIn(("dns", denied, "host-not-allowed", "proxy"), records, result)
                self.assertIn(("http", denied, "host-not-allowed", "proxy"), records, result)
                for record in result["refusedConnections"]:
                    self.assertIn(record["source"], ("supervisor", "proxy"), record)
                    if record["op"] != "connect":
                        self.assertEqual(record["source"], "proxy", record)


if __name__ == "__main__":
    sys.exit(run_suite(__name__))
