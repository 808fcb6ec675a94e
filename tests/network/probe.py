# SPDX-License-Identifier: MIT
"""What a confined command tries on the network (tests/reach/test_network.py runs it inside the sandbox).

`python3 probe.py ACTION ARGS...` prints one line per outcome: "status <HTTP status line>",
"body <text>", "errno <ENAME>", "gaierror <EAI_NAME>", "closed" (the peer closed with no answer),
"timeout", "ssl <reason>", ... A plain client: it knows nothing of the proxy variables (the
proxy-aware client the tests use is curl), except the two proxy-* actions, which speak to the proxy
the sandbox named in HTTPS_PROXY by hand, as a hostile command would.
"""
import ctypes
import errno
import os
import socket
import ssl
import struct
import sys
import threading

# A bound on a peer that hangs, never a measurement: a refusal is an errno or a close, at once.
PATIENCE = 20
socket.setdefaulttimeout(PATIENCE)


def say(*words):
    print(*words, flush=True)


def error_name(error):
    if isinstance(error, socket.gaierror):
        names = {value: name for name, value in vars(socket).items() if name.startswith("EAI_")}
        return f"gaierror {names.get(error.errno, error.errno)}"
    if isinstance(error, (socket.timeout, TimeoutError)):
        return "timeout"
    if isinstance(error, ssl.SSLError):
        return f"ssl {error.reason or error.__class__.__name__}"
    if isinstance(error, OSError) and error.errno:
        return f"errno {errno.errorcode.get(error.errno, error.errno)}"
    return f"error {error.__class__.__name__}"


def attempt(body):
    """Runs body(); an exception is printed as its outcome line."""
    try:
        body()
    except (OSError, ssl.SSLError) as error:
        say(error_name(error))


def read_answer(stream):
    """Prints the status line and body of an HTTP answer read to its end, or "closed"."""
    data = b""
    while True:
        chunk = stream.recv(65536)
        if not chunk:
            break
        data += chunk
    if not data:
        say("closed")
        return
    head, _, body = data.partition(b"\r\n\r\n")
    say("status", head.split(b"\r\n", 1)[0].decode(errors="replace"))
    say("body", body.decode(errors="replace").strip())


def request(stream, host_header, path="/"):
    stream.sendall(f"GET {path} HTTP/1.1\r\nHost: {host_header}\r\nConnection: close\r\n\r\n".encode())
    read_answer(stream)


def http(host, port, host_header=None, path="/probe"):
    """A plain HTTP GET to host:port (a name is resolved here, by glibc), Host header as given."""
    def body():
        with socket.create_connection((host, int(port))) as stream:
            say("connected")
            request(stream, f"{host}:{port}" if host_header in (None, "-") else host_header, path)
    attempt(body)


def fast_open(host, port, host_header, path="/fast-open"):
    """TCP Fast Open: the request sent by sendto(MSG_FASTOPEN) on an unconnected socket, which connects."""
    def body():
        address = socket.getaddrinfo(host, int(port), socket.AF_INET, socket.SOCK_STREAM)[0][4]
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as stream:
            data = f"GET {path} HTTP/1.1\r\nHost: {host_header}\r\nConnection: close\r\n\r\n".encode()
            stream.settimeout(None)  # a blocking send, which waits for the connection (a timeout is non-blocking)
            stream.sendto(data, socket.MSG_FASTOPEN, address)
            stream.settimeout(PATIENCE)
            say("sent")
            read_answer(stream)
    attempt(body)


def connect6(address, port, host_header=None):
    """A connect from an IPv6 socket (an IPv4-mapped address reaches the IPv4 listener behind it), then a
    GET with that Host header if one is given."""
    def body():
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as stream:
            stream.connect((address, int(port)))
            say("connected")
            if host_header:
                request(stream, host_header, "/mapped")
    attempt(body)


def sni(server_name):
    return None if server_name == "-" else server_name


def tls_context(server_name, cafile):
    """The certificate checked against cafile, and against the name unless there is none ("-": no SNI)."""
    context = ssl.create_default_context(cafile=cafile)
    context.check_hostname = sni(server_name) is not None
    return context


def tls(host, port, server_name, cafile, path="/probe"):
    """TLS to host:port with SNI `server_name` ("-": none), then a GET."""
    def body():
        with socket.create_connection((host, int(port))) as raw:
            say("connected")
            with tls_context(server_name, cafile).wrap_socket(raw, server_hostname=sni(server_name)) as stream:
                say("handshake")
                request(stream, f"{server_name}:{port}", path)
    attempt(body)


def connect(host, port):
    def body():
        with socket.create_connection((host, int(port))):
            say("connected")
    attempt(body)


def udp(address, port, style, wait="wait"):
    """One datagram to address:port by sendto, sendmsg or connect + send; then the echo (unless "nowait")."""
    def body():
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as client:
            target = (address, int(port))
            if style == "sendto":
                client.sendto(b"probe-udp", target)
            elif style == "sendmsg":
                client.sendmsg([b"probe-", b"udp"], [], 0, target)
            else:
                client.connect(target)
                client.send(b"probe-udp")
            say("sent")
            if wait == "wait":
                say("echo", client.recv(512).decode())
    attempt(body)


class IoVec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("length", ctypes.c_size_t)]


class MessageHeader(ctypes.Structure):
    _fields_ = [("name", ctypes.c_void_p), ("name_length", ctypes.c_uint32), ("iov", ctypes.POINTER(IoVec)),
                ("iov_length", ctypes.c_size_t), ("control", ctypes.c_void_p), ("control_length", ctypes.c_size_t),
                ("flags", ctypes.c_int)]


class MultiMessageHeader(ctypes.Structure):
    _fields_ = [("header", MessageHeader), ("length", ctypes.c_uint)]


def sendmmsg(address, port):
    """Two datagrams to address:port in one sendmmsg (python has no wrapper: ctypes, as a C program)."""
    libc = ctypes.CDLL(None, use_errno=True)
    target = struct.pack("=H", socket.AF_INET) + struct.pack(">H", int(port)) + socket.inet_aton(address) + b"\0" * 8
    name = ctypes.create_string_buffer(target, len(target))
    payloads = [ctypes.create_string_buffer(b"probe-mmsg-%d" % index, 12) for index in range(2)]
    vectors = [IoVec(ctypes.cast(payload, ctypes.c_void_p), 12) for payload in payloads]
    messages = (MultiMessageHeader * 2)()
    for index in range(2):
        messages[index].header = MessageHeader(ctypes.cast(name, ctypes.c_void_p), len(target),
                                               ctypes.pointer(vectors[index]), 1, None, 0, 0)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as client:
        sent = libc.sendmmsg(client.fileno(), messages, 2, 0)
        if sent < 0:
            say("errno", errno.errorcode.get(ctypes.get_errno(), ctypes.get_errno()))
        else:
            say("sent", sent)


QTYPES = {"A": 1, "AAAA": 28, "TXT": 16}


def dns_message(name, qtype):
    labels = b"".join(bytes([len(label)]) + label.encode() for label in name.rstrip(".").split("."))
    return struct.pack(">HHHHHH", 0x6453, 0x0100, 1, 0, 0, 0) + labels + b"\0" + struct.pack(">HH", qtype, 1)


def skip_name(message, offset):
    while True:
        length = message[offset]
        if length == 0:
            return offset + 1
        if length & 0xC0 == 0xC0:
            return offset + 2
        offset += 1 + length


def dns_summary(message):
    """'rcode N' and the A/AAAA/TXT data of the answer section."""
    rcode = message[3] & 0x0F
    questions, answers = struct.unpack(">HH", message[4:8])
    offset = 12
    for _ in range(questions):
        offset = skip_name(message, offset) + 4
    data = []
    for _ in range(answers):
        offset = skip_name(message, offset)
        rtype, _, _, length = struct.unpack(">HHIH", message[offset:offset + 10])
        offset += 10
        value = message[offset:offset + length]
        offset += length
        if rtype == 1:
            data.append(socket.inet_ntop(socket.AF_INET, value))
        elif rtype == 28:
            data.append(socket.inet_ntop(socket.AF_INET6, value))
        elif rtype == 16:
            data.append(value[1:].decode(errors="replace"))
    return " ".join([f"rcode {rcode}"] + data)


def dns(server, port, name, qtype, transport, wait="wait"):
    """A DNS query of our own, to server:port over udp (sendto), udp-connected or tcp; over UDP the answer
    is not waited for with "nowait"."""
    query = dns_message(name, QTYPES[qtype])

    def body():
        if transport == "tcp":
            with socket.create_connection((server, int(port))) as stream:
                stream.sendall(struct.pack(">H", len(query)) + query)
                length = stream.recv(2)
                if len(length) < 2:
                    say("closed")
                    return
                answer = b""
                while len(answer) < struct.unpack(">H", length)[0]:
                    chunk = stream.recv(65536)
                    if not chunk:
                        break
                    answer += chunk
                say(dns_summary(answer))
            return
        with socket.socket(socket.AF_INET6 if ":" in server else socket.AF_INET, socket.SOCK_DGRAM) as client:
            if transport == "udp-connected":
                client.connect((server, int(port)))
                client.send(query)
            else:
                client.sendto(query, (server, int(port)))
            say("sent")
            if wait == "wait":
                say(dns_summary(client.recv(65536)))
    attempt(body)


def resolve(name, family="any"):
    """getaddrinfo, as every program asks (glibc's resolver, /etc/resolv.conf's server, port 53)."""
    families = {"any": socket.AF_UNSPEC, "4": socket.AF_INET, "6": socket.AF_INET6}

    def body():
        found = socket.getaddrinfo(name, 80, families[family], socket.SOCK_STREAM)
        say("addresses", " ".join(sorted({entry[4][0] for entry in found})))
    attempt(body)


def proxy_address():
    value = os.environ.get("HTTPS_PROXY", "")
    authority = value.split("://", 1)[-1].rstrip("/")
    host, _, port = authority.rpartition(":")
    return host, int(port)


def read_head(stream):
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = stream.recv(4096)
        if not chunk:
            break
        data += chunk
    return data.split(b"\r\n", 1)[0].decode(errors="replace") if data else ""


def proxy_connect(authority, then, *arguments):
    """CONNECT authority through $HTTPS_PROXY by hand; then `tls SNI CAFILE` (a handshake naming SNI in the
    tunnel), `connect AUTHORITY` (a second CONNECT inside the tunnel: a relayed CONNECT) or `raw` (bytes
    that are no ClientHello)."""
    def body():
        with socket.create_connection(proxy_address()) as stream:
            stream.sendall(f"CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\n\r\n".encode())
            line = read_head(stream)
            say("proxy", line or "closed")
            if not line.split(" ")[1:2] == ["200"]:
                return
            if then == "tls":
                context = tls_context(arguments[0], arguments[1])
                with context.wrap_socket(stream, server_hostname=sni(arguments[0])) as secure:
                    say("handshake")
                    request(secure, arguments[0])
            elif then == "connect":
                stream.sendall(f"CONNECT {arguments[0]} HTTP/1.1\r\nHost: {arguments[0]}\r\n\r\n".encode())
                say("inner", read_head(stream) or "closed")
            else:
                stream.sendall(b"raw bytes, no ClientHello\r\n\r\n")
                say("raw", stream.recv(4096).decode(errors="replace") or "closed")
    attempt(body)


def proxy_get(uri, host_header):
    """A request with an absolute URI straight to $HTTP_PROXY, its Host header as given (which may name
    another host than the URI)."""
    def body():
        with socket.create_connection(proxy_address()) as stream:
            stream.sendall(f"GET {uri} HTTP/1.1\r\nHost: {host_header}\r\nConnection: close\r\n\r\n".encode())
            read_answer(stream)
    attempt(body)


def families():
    """Which sockets can be made: each 'kind made' or 'kind ENAME'."""
    kinds = [
        ("tcp", socket.AF_INET, socket.SOCK_STREAM, 0),
        ("tcp-flags", socket.AF_INET, socket.SOCK_STREAM | socket.SOCK_CLOEXEC | socket.SOCK_NONBLOCK, 0),
        ("tcp-explicit", socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP),
        ("udp", socket.AF_INET, socket.SOCK_DGRAM, 0),
        ("udp-explicit", socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_UDP),
        ("tcp6", socket.AF_INET6, socket.SOCK_STREAM, 0),
        ("udp6", socket.AF_INET6, socket.SOCK_DGRAM, 0),
        ("unix", socket.AF_UNIX, socket.SOCK_STREAM, 0),
        ("netlink-route", socket.AF_NETLINK, socket.SOCK_RAW, 0),
        ("raw-icmp", socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP),
        ("raw-tcp", socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_TCP),
        ("raw6", socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6),
        ("ping", socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_ICMP),
        ("sctp", socket.AF_INET, socket.SOCK_STREAM, 132),
        ("mptcp", socket.AF_INET, socket.SOCK_STREAM, 262),
        ("seqpacket-inet", socket.AF_INET, socket.SOCK_SEQPACKET, 0),
        ("packet", socket.AF_PACKET, socket.SOCK_RAW, 0),
        ("packet-dgram", socket.AF_PACKET, socket.SOCK_DGRAM, 0),
        ("vsock", 40, socket.SOCK_STREAM, 0),
        ("netlink-audit", socket.AF_NETLINK, socket.SOCK_RAW, 9),
        ("netlink-netfilter", socket.AF_NETLINK, socket.SOCK_RAW, 12),
        ("alg", 38, socket.SOCK_SEQPACKET, 0),
    ]
    for name, family, kind, protocol in kinds:
        try:
            socket.socket(family, kind, protocol).close()
            say(name, "made")
        except OSError as error:
            say(name, errno.errorcode.get(error.errno, error.errno))


def io_uring():
    """io_uring_setup (425) for one entry: 'io_uring ENAME', or 'io_uring ring' if a ring was made."""
    libc = ctypes.CDLL(None, use_errno=True)
    parameters = ctypes.create_string_buffer(120)
    ring = libc.syscall(425, 1, parameters)
    say("io_uring", "ring" if ring >= 0 else errno.errorcode.get(ctypes.get_errno(), ctypes.get_errno()))


def own():
    """Servers of the command's own on loopback, reached by the command: 'own-KIND reached|ENAME'."""
    def serve(server):
        while True:
            try:
                client, _ = server.accept()
            except OSError:
                return
            client.sendall(b"own")
            client.close()

    for kind, family, address in (("tcp", socket.AF_INET, "127.0.0.1"), ("tcp-wildcard", socket.AF_INET, "0.0.0.0"),
                                  ("tcp6", socket.AF_INET6, "::1"), ("tcp6-wildcard", socket.AF_INET6, "::")):
        try:
            server = socket.socket(family, socket.SOCK_STREAM)
            server.bind((address, 0))
            server.listen(4)
            threading.Thread(target=serve, args=(server,), daemon=True).start()
            bound = server.getsockname()
            target = "127.0.0.1" if family == socket.AF_INET else "::1"
            with socket.create_connection((target, bound[1])) as client:
                say(f"own-{kind}", "reached" if client.recv(3) == b"own" else "no-answer", "bound", bound[0])
        except OSError as error:
            say(f"own-{kind}", errno.errorcode.get(error.errno, error.errno))
    try:
        receiver = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        receiver.bind(("127.0.0.1", 0))
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sender:
            sender.sendto(b"own-udp", receiver.getsockname())
            say("own-udp", "reached" if receiver.recv(16) == b"own-udp" else "no-answer")
            # The sender was unbound: the send bound it, where datagrams from outside could reach it.
            say("own-udp-sender", "bound", sender.getsockname()[0])
    except OSError as error:
        say("own-udp", errno.errorcode.get(error.errno, error.errno))
    # An unbound socket's listen: the kernel would bind it on every address.
    try:
        server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        server.listen(4)
        say("own-listen-unbound", "bound", server.getsockname()[0])
    except OSError as error:
        say("own-listen-unbound", errno.errorcode.get(error.errno, error.errno))


def listen(address):
    """A server bound at address:0 (a wildcard, often): 'listening ADDRESS PORT', kept until stdin ends."""
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    try:
        server = socket.socket(family, socket.SOCK_STREAM)
        server.bind((address, 0))
        server.listen(8)
        bound = server.getsockname()
        say("listening", bound[0], bound[1])
    except OSError as error:
        say(error_name(error))
        return
    sys.stdin.read()


ACTIONS = {"http": http, "fast-open": fast_open, "connect6": connect6, "tls": tls, "connect": connect, "udp": udp, "dns": dns, "resolve": resolve,
           "proxy-connect": proxy_connect, "proxy-get": proxy_get, "sendmmsg": sendmmsg, "families": families, "io_uring": io_uring, "own": own,
           "listen": listen}

if __name__ == "__main__":
    ACTIONS[sys.argv[1]](*sys.argv[2:])
