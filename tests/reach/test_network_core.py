# SPDX-License-Identifier: MIT
"""The network policy as core/ enforces it (issue 21), through landlock-run on the real kernel.

The test plays the host: it starts its own TCP and UDP servers on loopback; a confined command
(landlock-run --network off|on, python3 inside: tests/reach/network_core_probe.py) tries to reach them.
A refusal is judged by the command's errno *and* by the server, which must have seen nothing: a TCP
server's backlog holds no connection (a non-blocking accept says EAGAIN), a UDP server's queue no
datagram.  The allow-list needs the library's network service (part E tests it end to end); here it is
refused as a launcher flag.
"""
import json
import os
import socket
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "livability"))
import livability  # noqa: E402

LANDLOCK_RUN = os.environ.get("LANDLOCK_RUN_BIN", "")
PROBE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "network_core_probe.py")
PYTHON = os.path.realpath(sys.executable)
EXEC_HELPER = os.path.join(os.path.dirname(livability.BIN), "dsh-sandbox-exec") if livability.BIN else ""


class HostTcp:
    """A host service on loopback: it never accepts while the command runs, so a reached connect stays queued."""

    def __init__(self, family=socket.AF_INET, address="127.0.0.1", reuse_port=False):
        self.server = socket.socket(family, socket.SOCK_STREAM)
        if reuse_port:
            self.server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        self.server.bind((address, 0))
        self.server.listen(64)
        self.port = self.server.getsockname()[1]

    def connections(self):
        self.server.setblocking(False)
        count = 0
        while True:
            try:
                client, _ = self.server.accept()
            except BlockingIOError:
                return count
            client.close()
            count += 1

    def close(self):
        self.server.close()


class HostUdp:
    def __init__(self):
        self.server = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.server.bind(("127.0.0.1", 0))
        self.server.setblocking(False)
        self.port = self.server.getsockname()[1]

    def datagrams(self):
        count = 0
        while True:
            try:
                self.server.recv(64)
            except BlockingIOError:
                return count
            count += 1

    def close(self):
        self.server.close()


class NetworkCore(unittest.TestCase):
    def setUp(self):
        if not LANDLOCK_RUN or not os.access(LANDLOCK_RUN, os.X_OK):
            self.skipTest("LANDLOCK_RUN_BIN is not set (run through meson test)")
        if livability.landlock_abi() < 1:
            self.skipTest("this kernel has no Landlock")
        os.makedirs(livability.SCRATCH, exist_ok=True)
        self.workspace = tempfile.mkdtemp(prefix="network-core-", dir=livability.SCRATCH)

    def probe(self, network, case, *arguments, extra=()):
        command = [LANDLOCK_RUN, "--ro", "/", "--rw", self.workspace, *network, *extra, "--", PYTHON, PROBE, case,
                   *[str(argument) for argument in arguments]]
        outcome = subprocess.run(command, capture_output=True, text=True, check=False, timeout=120)
        self.assertEqual(outcome.returncode, 0, outcome.stderr)
        return json.loads(outcome.stdout.strip().splitlines()[-1])

    def off(self, case, *arguments, extra=()):
        return self.probe(["--network", "off"], case, *arguments, extra=extra)

    def test_off_tcp_to_a_host_server_is_refused_and_never_arrives(self):
        server = HostTcp()
        try:
            self.assertEqual(self.off("tcp", server.port), {"ok": False, "errno": "EACCES"})
            self.assertEqual(server.connections(), 0)
        finally:
            server.close()

    def test_off_the_wildcard_and_mapped_forms_are_the_loopback(self):
        server = HostTcp()
        try:
            self.assertEqual(self.off("tcp-wildcard", server.port), {"ok": False, "errno": "EACCES"})
            self.assertEqual(self.off("tcp-mapped", server.port), {"ok": False, "errno": "EACCES"})
            self.assertEqual(server.connections(), 0)
        finally:
            server.close()

    def test_off_udp_to_a_host_socket_is_refused_and_never_arrives(self):
        server = HostUdp()
        try:
            self.assertEqual(self.off("udp", server.port), {"ok": False, "errno": "EACCES"})
            self.assertEqual(server.datagrams(), 0)
        finally:
            server.close()

    def test_off_the_commands_own_servers_are_reached_on_loopback_only(self):
        for address, expected in (("127.0.0.1", "127.0.0.1"), ("0.0.0.0", "127.0.0.1"), ("::1", "::1"),
                                  ("::", "::1")):
            with self.subTest(address=address):
                outcome = self.off("own-server", address)
                self.assertTrue(outcome["ok"], outcome)
                self.assertEqual(outcome["value"], {"bound": expected, "received": "ping"})
        outcome = self.off("own-udp")
        # The sender was never bound: the kernel would have bound it to the wildcard, the supervisor binds loopback.
        self.assertEqual(outcome, {"ok": True, "value": {"bound": "127.0.0.1", "received": "ping",
                                                         "sender": "127.0.0.1"}})

    def test_off_a_bind_elsewhere_than_loopback_is_refused(self):
        self.assertEqual(self.off("bind-elsewhere"), {"ok": False, "errno": "EADDRNOTAVAIL"})

    def test_off_an_allowed_local_port_is_reached(self):
        server, other = HostTcp(), HostTcp()
        try:
            outcome = self.off("tcp", server.port, extra=("--allow-local-port", str(server.port)))
            self.assertEqual(outcome, {"ok": True, "value": "connected"})
            self.assertEqual(server.connections(), 1)
            outcome = self.off("tcp", other.port, extra=("--allow-local-port", str(server.port)))
            self.assertEqual(outcome, {"ok": False, "errno": "EACCES"})
            self.assertEqual(other.connections(), 0)
        finally:
            server.close()
            other.close()

    def test_off_a_port_shared_with_a_host_server_is_not_own(self):
        server = HostTcp(reuse_port=True)
        try:
            outcome = self.off("reuse-port", server.port)
            self.assertTrue(outcome["ok"], outcome)
            self.assertEqual(outcome["value"], [{"ok": False, "errno": "EACCES"}] * 8)
            self.assertEqual(server.connections(), 0)
        finally:
            server.close()

    def test_off_families_and_protocols_are_limited(self):
        outcome = self.off("families")
        self.assertEqual(outcome["value"], {
            "packet": "EAFNOSUPPORT", "raw": "EPROTONOSUPPORT", "vsock": "EAFNOSUPPORT",
            "icmp": "EPROTONOSUPPORT", "icmp6": "EPROTONOSUPPORT", "sctp": "EPROTONOSUPPORT",
            "mptcp": "EPROTONOSUPPORT", "netlink-audit": "EPROTONOSUPPORT", "netlink-route": "made",
            "tcp": "made", "udp6": "made", "unix-stream": "made"})

    def test_off_netlink_route_still_reads_the_interfaces(self):
        outcome = self.off("interfaces")
        self.assertTrue(outcome["ok"], outcome)
        self.assertIn("lo", outcome["value"])

    def test_off_scm_rights_over_a_socketpair_still_works(self):
        path = os.path.join(self.workspace, "passed.txt")
        with open(path, "w", encoding="utf-8") as handle:
            handle.write("through the fd")
        self.assertEqual(self.off("rights", path), {"ok": True, "value": "through the fd"})

    def test_off_sends_on_blocking_sockets_wait_and_count_whole(self):
        """A send the supervisor performs on a blocking socket waits as the kernel's would: nothing short, nothing lost."""
        outcome = self.off("blocking-sends")
        self.assertTrue(outcome["ok"], outcome)
        for kind in ("unix", "tcp"):
            self.assertTrue(outcome["value"][kind]["intact"], outcome)
            self.assertLessEqual(outcome["value"][kind]["largest"], 256 * 1024, outcome)

    def test_off_sendmmsg_to_a_refused_address_is_refused(self):
        server = HostUdp()
        try:
            self.assertEqual(self.off("sendmmsg", server.port), {"ok": False, "errno": "EACCES"})
            self.assertEqual(server.datagrams(), 0)
        finally:
            server.close()
        outcome = self.off("sendmmsg-own")
        self.assertEqual(outcome, {"ok": True, "value": {"sent": 2, "received": ["reached", "reached"]}})

    def test_off_tcp_fast_open_to_a_refused_address_is_refused(self):
        server = HostTcp()
        try:
            self.assertEqual(self.off("fast-open", server.port), {"ok": False, "errno": "EACCES"})
            self.assertEqual(server.connections(), 0)
        finally:
            server.close()

    def test_io_uring_is_refused(self):
        for network in (["--network", "off"], ["--network", "on"]):
            with self.subTest(network=network):
                self.assertEqual(self.probe(network, "io-uring"), {"ok": False, "errno": "EPERM"})

    def test_off_a_socket_swapped_under_a_send_gets_nothing_out(self):
        server = HostUdp()
        try:
            outcome = self.off("swap-race", server.port, 1500)
            self.assertTrue(outcome["ok"], outcome)
            self.assertNotIn("sent", outcome["value"])
            self.assertEqual(server.datagrams(), 0)
        finally:
            server.close()

    def test_on_everything_as_before(self):
        tcp, udp = HostTcp(), HostUdp()
        try:
            on = ["--network", "on"]
            self.assertEqual(self.probe(on, "tcp", tcp.port), {"ok": True, "value": "connected"})
            self.assertEqual(tcp.connections(), 1)
            self.assertEqual(self.probe(on, "udp", udp.port), {"ok": True, "value": 7})
            self.assertEqual(udp.datagrams(), 1)
            outcome = self.probe(on, "own-server", "0.0.0.0")
            self.assertEqual(outcome["value"], {"bound": "0.0.0.0", "received": "ping"})
            families = self.probe(on, "families")["value"]
            self.assertEqual(families["packet"], "EPERM")  # the kernel's: no CAP_NET_RAW
            self.assertEqual(families["sctp"] in ("made", "EPROTONOSUPPORT"), True)
            self.assertEqual(families["netlink-audit"], "made")
        finally:
            tcp.close()
            udp.close()

    def test_unsupervised_off_makes_no_inet_socket(self):
        """An argv nobody supervises (dsh-sandbox-exec without --listener-fd): off makes no inet socket at all."""
        if not os.access(EXEC_HELPER, os.X_OK):
            self.skipTest("no dsh-sandbox-exec beside the tool")
        server = HostTcp()
        try:
            for network, expected in (("off", "EACCES"), ("allow-list", "EACCES")):
                with self.subTest(network=network):
                    outcome = subprocess.run([EXEC_HELPER, "--network", network, "--", PYTHON, PROBE, "families"],
                                             capture_output=True, text=True, check=False, timeout=60)
                    self.assertEqual(outcome.returncode, 0, outcome.stderr)
                    families = json.loads(outcome.stdout)["value"]
                    self.assertEqual(families["tcp"], expected)
                    self.assertEqual(families["udp6"], expected)
                    self.assertEqual(families["packet"], "EAFNOSUPPORT")
                    self.assertEqual(families["unix-stream"], "made")
                    outcome = subprocess.run([EXEC_HELPER, "--network", network, "--", PYTHON, PROBE, "tcp",
                                              str(server.port)], capture_output=True, text=True, check=False,
                                             timeout=60)
                    self.assertEqual(json.loads(outcome.stdout), {"ok": False, "errno": "EACCES"})
            self.assertEqual(server.connections(), 0)
        finally:
            server.close()

    def test_off_where_the_host_refuses_pidfd_getfd_is_a_refusal(self):
        """A host whose seccomp profile refuses pidfd_getfd cannot hold off: 125 and one line, nothing run."""
        refuse_exec = os.environ.get("REFUSE_EXEC_BIN", "")
        if not os.access(refuse_exec, os.X_OK):
            self.skipTest("REFUSE_EXEC_BIN is not set (run through meson test)")
        marker = os.path.join(self.workspace, "ran")
        outcome = subprocess.run([refuse_exec, "pidfd_getfd", LANDLOCK_RUN, "--ro", "/", "--rw", self.workspace,
                                  "--network", "off", "--", "touch", marker], capture_output=True, text=True,
                                 check=False, timeout=60)
        self.assertEqual(outcome.returncode, 125, outcome.stderr)
        self.assertIn("cannot hold --network off", outcome.stderr)
        self.assertEqual(len(outcome.stderr.strip().splitlines()), 1, outcome.stderr)
        self.assertFalse(os.path.exists(marker))

    def test_usage_errors(self):
        for arguments, text in ((["--network", "allow-list"], "allow-list"), (["--network", "maybe"], "maybe"),
                                (["--allow-local-port", "0"], "0"), (["--allow-local-port", "65536"], "65536"),
                                (["--network", "on", "--allow-local-port", "80"], "--allow-local-port")):
            with self.subTest(arguments=arguments):
                outcome = subprocess.run([LANDLOCK_RUN, "--ro", "/", *arguments, "--", "true"], capture_output=True,
                                         text=True, check=False)
                self.assertEqual(outcome.returncode, 125, outcome.stderr)
                self.assertEqual(len(outcome.stderr.strip().splitlines()), 1, outcome.stderr)
                self.assertIn(text, outcome.stderr)
                self.assertTrue(outcome.stderr.startswith("landlock-run: usage error:"), outcome.stderr)


if __name__ == "__main__":
    sys.exit(livability.run_suite(__name__))
