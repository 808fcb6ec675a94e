# SPDX-License-Identifier: MIT
"""The confined side of test_network_core.py: one case per run, its outcome as one JSON line on stdout.

Every case is what a hostile command would try; the host side judges it by the errno printed here *and*
by what its own servers saw.
"""
import ctypes
import errno
import json
import os
import socket
import sys
import threading

libc = ctypes.CDLL(None, use_errno=True)
MSG_FASTOPEN = 0x20000000


def error_name(error):
    return errno.errorcode.get(error.errno, str(error.errno)) if isinstance(error, OSError) else str(error)


def attempt(function):
    try:
        return {"ok": True, "value": function()}
    except OSError as error:
        return {"ok": False, "errno": error_name(error)}


def tcp_connect(port, host="127.0.0.1", family=socket.AF_INET):
    client = socket.socket(family, socket.SOCK_STREAM)
    client.connect((host, port))
    client.sendall(b"reached")
    client.close()
    return "connected"


def udp_send(port, host="127.0.0.1"):
    sender = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    return sender.sendto(b"reached", (host, port))


def own_server(address):
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    server = socket.socket(family, socket.SOCK_STREAM)
    server.bind((address, 0))
    server.listen(4)
    bound = server.getsockname()
    target = "::1" if family == socket.AF_INET6 else "127.0.0.1"
    client = socket.socket(family, socket.SOCK_STREAM)
    client.connect((target, bound[1]))
    accepted, _ = server.accept()
    client.sendall(b"ping")
    return {"bound": bound[0], "received": accepted.recv(4).decode()}


def own_udp():
    receiver = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    receiver.bind(("0.0.0.0", 0))
    sender = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sender.sendto(b"ping", ("127.0.0.1", receiver.getsockname()[1]))
    return {"bound": receiver.getsockname()[0], "received": receiver.recv(4).decode(),
            "sender": sender.getsockname()[0]}


def families():
    made = {}
    cases = {
        "packet": (socket.AF_PACKET, socket.SOCK_RAW, 0),
        "raw": (socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP),
        "vsock": (socket.AF_VSOCK, socket.SOCK_STREAM, 0),
        "icmp": (socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_ICMP),
        "icmp6": (socket.AF_INET6, socket.SOCK_DGRAM, socket.IPPROTO_ICMPV6),
        "sctp": (socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_SCTP),
        "mptcp": (socket.AF_INET, socket.SOCK_STREAM, 262),
        "netlink-audit": (socket.AF_NETLINK, socket.SOCK_RAW, 9),
        "netlink-route": (socket.AF_NETLINK, socket.SOCK_RAW, 0),
        "tcp": (socket.AF_INET, socket.SOCK_STREAM, 0),
        "udp6": (socket.AF_INET6, socket.SOCK_DGRAM, socket.IPPROTO_UDP),
        "unix-stream": (socket.AF_UNIX, socket.SOCK_STREAM, 0),
    }
    for name, (family, kind, protocol) in cases.items():
        outcome = attempt(lambda: socket.socket(family, kind, protocol).close() or "made")
        made[name] = outcome["value"] if outcome["ok"] else outcome["errno"]
    return made


def rights_over_socketpair(path):
    """An fd sent with SCM_RIGHTS arrives: the other end reads the file through it."""
    left, right = socket.socketpair()
    with open(path, "rb") as handle:
        socket.send_fds(left, [b"x"], [handle.fileno()])
    _, fds, _, _ = socket.recv_fds(right, 1, 1)
    with os.fdopen(fds[0], "rb") as received:
        return received.read().decode()


class MMsgHdr(ctypes.Structure):
    pass


class IoVec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("length", ctypes.c_size_t)]


class MsgHdr(ctypes.Structure):
    _fields_ = [("name", ctypes.c_void_p), ("namelen", ctypes.c_uint32), ("iov", ctypes.POINTER(IoVec)),
                ("iovlen", ctypes.c_size_t), ("control", ctypes.c_void_p), ("controllen", ctypes.c_size_t),
                ("flags", ctypes.c_int)]


MMsgHdr._fields_ = [("header", MsgHdr), ("length", ctypes.c_uint)]


def sockaddr_in(port, host="127.0.0.1"):
    raw = (socket.AF_INET).to_bytes(2, "little") + port.to_bytes(2, "big") + socket.inet_aton(host) + b"\0" * 8
    return ctypes.create_string_buffer(raw, len(raw))


def sendmmsg(port):
    sender = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    name = sockaddr_in(port)
    data = ctypes.create_string_buffer(b"reached")
    vector = IoVec(ctypes.cast(data, ctypes.c_void_p), 7)
    messages = (MMsgHdr * 2)()
    for message in messages:
        message.header = MsgHdr(ctypes.cast(name, ctypes.c_void_p), 16, ctypes.pointer(vector), 1, None, 0, 0)
    sent = libc.sendmmsg(sender.fileno(), messages, 2, 0)
    if sent < 0:
        raise OSError(ctypes.get_errno(), "sendmmsg")
    return sent


def sendmmsg_own():
    receiver = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    receiver.bind(("127.0.0.1", 0))
    sent = sendmmsg(receiver.getsockname()[1])
    return {"sent": sent, "received": [receiver.recv(16).decode() for _ in range(sent)]}


def fast_open(port):
    client = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    return client.sendto(b"reached", MSG_FASTOPEN, ("127.0.0.1", port))


def io_uring():
    params = ctypes.create_string_buffer(120)
    result = libc.syscall(425, 4, params)
    if result < 0:
        raise OSError(ctypes.get_errno(), "io_uring_setup")
    return "made"


def bind_elsewhere():
    server = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    server.bind(("192.0.2.1", 0))
    return server.getsockname()


def reuse_port(port):
    """Share the host server's port (SO_REUSEPORT), then connect to it as to an own server."""
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    server.bind(("127.0.0.1", port))
    server.listen(4)
    results = [attempt(lambda: tcp_connect(port)) for _ in range(8)]
    return results


def swap_race(port, rounds):
    """A thread swaps a UDP socket onto the fd number a sendmsg/sendto names; none may get a datagram out."""
    left, _right = socket.socketpair()
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    number = os.dup(left.fileno())
    stop = threading.Event()

    def swapper():
        while not stop.is_set():
            os.dup2(udp.fileno(), number)
            os.dup2(left.fileno(), number)

    thread = threading.Thread(target=swapper)
    thread.start()
    answers = {}
    target = ("127.0.0.1", port)
    for _ in range(rounds):
        for call in ("sendto", "sendmsg"):
            outcome = attempt(lambda: os_send(number, call, target))
            key = outcome["errno"] if not outcome["ok"] else "sent"
            answers[key] = answers.get(key, 0) + 1
    stop.set()
    thread.join()
    return answers


def os_send(number, call, target):
    name = sockaddr_in(target[1], target[0])
    data = ctypes.create_string_buffer(b"reached")
    if call == "sendto":
        result = libc.sendto(number, data, 7, 0, name, 16)
    else:
        vector = IoVec(ctypes.cast(data, ctypes.c_void_p), 7)
        header = MsgHdr(ctypes.cast(name, ctypes.c_void_p), 16, ctypes.pointer(vector), 1, None, 0, 0)
        result = libc.sendmsg(number, ctypes.byref(header), 0)
    if result < 0:
        raise OSError(ctypes.get_errno(), call)
    return result


def through_gate():
    """Destinations a test gate routes (tests/integration/test-network-gate.c): redirected, refused, Fast Open."""
    outcome = {}
    outcome["redirected"] = attempt(lambda: tcp_connect(4444, "192.0.2.1"))
    outcome["refused"] = attempt(lambda: tcp_connect(5555, "192.0.2.1"))
    sender = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    outcome["dns"] = attempt(lambda: sender.sendto(b"query", ("192.0.2.1", 53)))
    outcome["udp-refused"] = attempt(lambda: sender.sendto(b"query", ("192.0.2.1", 54)))
    client = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    outcome["redirected6"] = attempt(lambda: client.connect(("::ffff:192.0.2.1", 4444)) or "connected")
    client.close()
    fast = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    outcome["fast-open"] = attempt(lambda: fast.sendto(b"fastopen", MSG_FASTOPEN, ("192.0.2.1", 4444)))
    fast.close()
    if os.environ.get("NETWORK_CORE_LOCAL_PORT"):
        outcome["local"] = attempt(lambda: tcp_connect(int(os.environ["NETWORK_CORE_LOCAL_PORT"])))
    return outcome


def blocking_sends():
    """sendmsg and sendto on blocking sockets whose buffers fill: every call counts what went out, nothing is lost.

    Each call may send less than asked (the supervisor copies at most 256 KiB a call), never more; the
    sender loops as every sender must, and the reader, slower, must get exactly what the counts say.
    """
    def exchange(sender, receiver, send):
        received = bytearray()
        counts = []

        def reader():
            while True:
                chunk = receiver.recv(65536)
                if not chunk:
                    return
                received.extend(chunk)

        thread = threading.Thread(target=reader)
        thread.start()
        payload = bytes(range(256)) * 4096  # 1 MiB, not all one byte: order matters
        offset = 0
        while offset < len(payload):
            count = send(payload[offset:])
            counts.append(count)
            offset += count
        sender.shutdown(socket.SHUT_WR)
        thread.join()
        return {"calls": len(counts), "largest": max(counts), "intact": bytes(received) == payload}

    left, right = socket.socketpair()
    unix = exchange(left, right, lambda data: left.sendmsg([data]))
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    client = socket.socket()
    client.connect(server.getsockname())
    accepted, _ = server.accept()
    tcp = exchange(client, accepted, lambda data: client.sendto(data, ("127.0.0.1", 9)))  # the address: ignored
    return {"unix": unix, "tcp": tcp}


CASES = {
    "blocking-sends": lambda a: attempt(blocking_sends),
    "interfaces": lambda a: attempt(lambda: sorted(name for _, name in socket.if_nameindex())),
    "gate": lambda a: {"ok": True, "value": through_gate()},
    "tcp": lambda a: attempt(lambda: tcp_connect(int(a[0]))),
    "tcp-wildcard": lambda a: attempt(lambda: tcp_connect(int(a[0]), "0.0.0.0")),
    "tcp-mapped": lambda a: attempt(lambda: tcp_connect(int(a[0]), "::ffff:127.0.0.1", socket.AF_INET6)),
    "udp": lambda a: attempt(lambda: udp_send(int(a[0]))),
    "own-server": lambda a: attempt(lambda: own_server(a[0])),
    "own-udp": lambda a: attempt(own_udp),
    "families": lambda a: {"ok": True, "value": families()},
    "rights": lambda a: attempt(lambda: rights_over_socketpair(a[0])),
    "sendmmsg": lambda a: attempt(lambda: sendmmsg(int(a[0]))),
    "sendmmsg-own": lambda a: attempt(sendmmsg_own),
    "fast-open": lambda a: attempt(lambda: fast_open(int(a[0]))),
    "io-uring": lambda a: attempt(io_uring),
    "bind-elsewhere": lambda a: attempt(bind_elsewhere),
    "reuse-port": lambda a: attempt(lambda: reuse_port(int(a[0]))),
    "swap-race": lambda a: attempt(lambda: swap_race(int(a[0]), int(a[1]))),
}

if __name__ == "__main__":
    print(json.dumps(CASES[sys.argv[1]](sys.argv[2:])))
