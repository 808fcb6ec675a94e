# SPDX-License-Identifier: MIT
"""The loopback fixtures the network tests start (issue 21): no test reaches the internet.

Every fixture listens on 127.0.0.1 at an ephemeral port and keeps what it saw, so that a test judges a
refusal on the fixture's side (nothing accepted, nothing asked, nothing received), not only by the
command's exit status:

- Dnsmasq: the upstream resolver (`--dns-upstream 127.0.0.1:PORT`), Debian's dnsmasq-base with no
  upstream of its own, answering only the made-up names of NAMES under dsh.test and logging every
  query to a file (`queried()` reads it back);
- HttpServer: python's http.server, recording each connection accepted and each request (path, Host);
- TlsServer: TLS with a self-signed certificate made at test time by `openssl req -x509` (its SAN names
  the test names and 127.0.0.1), recording each connection, the first bytes it received and the SNI of
  each handshake that completed;
- UdpEcho: echoes each datagram and records it.
"""
import ctypes
import http.server
import os
import re
import shutil
import socket
import ssl
import struct
import subprocess
import threading
import time

DOMAIN = "dsh.test"
# The names dnsmasq answers.  The refused ones resolve to the fixtures' own address at the upstream:
# were the stub to forward one, the command could reach a fixture with it, which the fixture would see.
NAMES = {
    "allowed.dsh.test": "127.0.0.1",
    "other.dsh.test": "127.0.0.1",
    "denied.dsh.test": "127.0.0.1",
    "meta.dsh.test": "169.254.169.254",
    "far.dsh.test": "127.0.0.2",
    # What a blocking resolver answers for a name it blocks: a connect to it reaches the host itself.
    "zero.dsh.test": "0.0.0.0",
}
NAMES6 = {
    "meta6.dsh.test": "fd00:ec2::254",
    "mapped.dsh.test": "::ffff:169.254.169.254",
}
TXT = ("allowed.dsh.test", "v=dsh-test")
DNSMASQ = shutil.which("dnsmasq") or "/usr/sbin/dnsmasq"


def missing_tools():
    """The programs the fixtures and the tests' clients need that this host lacks (scripts/ensure-deps.sh
    installs them)."""
    found = {"dnsmasq": os.access(DNSMASQ, os.X_OK), "openssl": bool(shutil.which("openssl")),
             "curl": bool(shutil.which("curl"))}
    return [name for name, present in found.items() if not present]
# A bound on a fixture that does not come up or a peer that hangs, never a measurement.
PATIENCE = 30


def wait_for(predicate, what):
    """Polls `predicate` until it holds; a bound (PATIENCE) on a fixture that never gets there."""
    deadline = time.monotonic() + PATIENCE
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"a fixture never {what}")
        time.sleep(0.005)


def free_port():
    """A port free on 127.0.0.1 for both TCP and UDP at the time of asking (dnsmasq takes a number)."""
    for _ in range(64):
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
            udp.bind(("127.0.0.1", 0))
            port = udp.getsockname()[1]
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as tcp:
                try:
                    tcp.bind(("127.0.0.1", port))
                except OSError:
                    continue
                return port
    raise RuntimeError("no port free for both TCP and UDP on 127.0.0.1")


def end_with_parent():
    """In the child before exec: SIGTERM when the process that started it ends, however it ends (a test
    killed at its timeout, a bench interrupted), so that no dnsmasq outlives its test."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, 15)  # PR_SET_PDEATHSIG, SIGTERM


def dns_query(name, qtype=1, ident=0x4453):
    """A DNS query message for `name` (qtype 1 A, 28 AAAA, 16 TXT), recursion desired."""
    labels = b"".join(bytes([len(label)]) + label.encode() for label in name.rstrip(".").split("."))
    return struct.pack(">HHHHHH", ident, 0x0100, 1, 0, 0, 0) + labels + b"\0" + struct.pack(">HH", qtype, 1)


class Dnsmasq:
    """dnsmasq on 127.0.0.1:port, answering NAMES only (NXDOMAIN for the rest of dsh.test, REFUSED for
    every other name: it has no upstream), every query logged to `log`."""

    def __init__(self, place):
        self.log = os.path.join(place, "dnsmasq.log")
        self.process = None
        self.port = None
        self.sentinels = 0
        for _ in range(8):
            self.port = free_port()
            if self._start():
                return
        raise RuntimeError(f"dnsmasq did not start: {self._log_text()[-2000:]}")

    def _arguments(self):
        arguments = [DNSMASQ, "--keep-in-foreground", "--conf-file=/dev/null", "--no-resolv", "--no-hosts",
                     "--log-queries", f"--log-facility={self.log}", f"--port={self.port}",
                     "--listen-address=127.0.0.1", "--bind-interfaces", "--user=root", "--group=root",
                     "--pid-file=", f"--local=/{DOMAIN}/", f"--txt-record={TXT[0]},{TXT[1]}"]
        for name, address in {**NAMES, **NAMES6}.items():
            arguments.append(f"--host-record={name},{address}")
        return arguments

    def _start(self):
        open(self.log, "w", encoding="utf-8").close()
        self.process = subprocess.Popen(self._arguments(), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL, preexec_fn=end_with_parent)
        # Ready when its TCP listener answers (no query asked: the log holds only the tests' own).
        while self.process.poll() is None:
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
                probe.settimeout(PATIENCE)
                if probe.connect_ex(("127.0.0.1", self.port)) == 0:
                    return True
        return False  # it exited: the port was taken in between, most likely

    def _log_text(self):
        try:
            with open(self.log, encoding="utf-8", errors="replace") as handle:
                return handle.read()
        except FileNotFoundError:
            return ""

    def mark(self):
        """Where the log ends now: queried(since=mark()) reads only what came after."""
        return len(self._log_text())

    def queried(self, since=0):
        """The names asked since `since`, lower case, as (qtype, name) pairs in order."""
        return [(kind, name.lower()) for kind, name in
                re.findall(r"query\[(\w+)\] (\S+) from", self._log_text()[since:])
                if not name.lower().startswith("settle-")]

    def names_queried(self, since=0):
        return [name for _, name in self.queried(since)]

    def settle(self):
        """Returns once every query sent before the call is in the log: a sentinel query of the test's
        own, asked after them, is (dnsmasq answers in order and logs before it answers)."""
        self.sentinels += 1
        name = f"settle-{self.sentinels}.{DOMAIN}"
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as client:
            client.settimeout(PATIENCE)
            client.sendto(dns_query(name), ("127.0.0.1", self.port))
            client.recv(512)
        wait_for(lambda: f"] {name} from" in self._log_text(), f"logged the query {name}")

    @property
    def upstream(self):
        return f"127.0.0.1:{self.port}"

    def close(self):
        if self.process and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=PATIENCE)


class Recorder:
    """What a fixture saw, shared by its threads."""

    def __init__(self):
        self.lock = threading.Lock()
        self.events = []

    def add(self, *event):
        with self.lock:
            self.events.append(event)

    def of(self, kind):
        with self.lock:
            return [event[1:] for event in self.events if event[0] == kind]

    def clear(self):
        with self.lock:
            self.events.clear()


def settle_tcp(fixture):
    """Returns once every connection made to `fixture` before the call has been accepted and recorded:
    the test's own sentinel connection, made after them, is (the kernel's accept queue is in order).
    The sentinel's address goes to `fixture.sentinels`, which accepted() leaves out."""
    with socket.create_connection(("127.0.0.1", fixture.port), timeout=PATIENCE) as sentinel:
        peer = sentinel.getsockname()
        fixture.sentinels.add(peer)
        wait_for(lambda: peer in fixture.seen.of("accept") or (peer,) in fixture.seen.of("accept"),
                 "accepted the sentinel connection")


class HttpServer:
    """http.server on 127.0.0.1; each accepted connection and each request (path, Host) recorded."""

    def __init__(self):
        self.seen = Recorder()
        self.sentinels = set()
        seen = self.seen

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"

            def do_GET(self):  # noqa: N802 (http.server's name)
                seen.add("request", self.path, self.headers.get("Host", ""))
                body = f"http fixture {self.path}\n".encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *arguments):
                pass

        class Server(http.server.ThreadingHTTPServer):
            daemon_threads = True

            def verify_request(self, request, client_address):
                seen.add("accept", client_address)
                return True

        self.server = Server(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def accepted(self):
        return len([peer for (peer,) in self.seen.of("accept") if peer not in self.sentinels])

    def settle(self):
        settle_tcp(self)

    def requests(self):
        return self.seen.of("request")

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def make_certificate(place):
    """A self-signed certificate and key (PEM) for the test names and 127.0.0.1: (cert, key) paths."""
    cert, key = os.path.join(place, "fixture-cert.pem"), os.path.join(place, "fixture-key.pem")
    names = ",".join(f"DNS:{name}" for name in NAMES) + ",IP:127.0.0.1"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                    "-nodes", "-keyout", key, "-out", cert, "-days", "2", "-subj", "/CN=allowed.dsh.test",
                    "-addext", f"subjectAltName={names}"], check=True, capture_output=True)
    os.chmod(key, 0o644)
    os.chmod(cert, 0o644)
    return cert, key


class TlsServer:
    """TLS on 127.0.0.1 with the certificate of make_certificate(); records each connection ("accept"),
    the first bytes it received before the handshake ("first", at most 64), and each completed
    handshake with its SNI ("handshake"), then answers one HTTP request."""

    def __init__(self, cert, key):
        self.seen = Recorder()
        self.sentinels = set()
        self.cert, self.key = cert, key
        self.server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.server.bind(("127.0.0.1", 0))
        self.server.listen(16)
        self.port = self.server.getsockname()[1]
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while True:
            try:
                client, peer = self.server.accept()
            except OSError:
                return
            self.seen.add("accept", peer)
            threading.Thread(target=self._answer, args=(client,), daemon=True).start()

    def _answer(self, client):
        client.settimeout(PATIENCE)
        names = []
        try:
            self.seen.add("first", client.recv(64, socket.MSG_PEEK))
            # A context per connection: the SNI callback keeps this connection's name.
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(self.cert, self.key)
            context.sni_callback = lambda _socket, name, _context: names.append(name)
            with context.wrap_socket(client, server_side=True) as tls:
                self.seen.add("handshake", names[0] if names else None)
                request = tls.recv(4096)
                body = b"tls fixture " + request.split(b"\r\n", 1)[0] + b"\n"
                tls.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
        except (OSError, ssl.SSLError) as error:
            self.seen.add("failed", str(error))
        finally:
            client.close()
            self.seen.add("done")

    def accepted(self):
        return len([peer for (peer,) in self.seen.of("accept") if peer not in self.sentinels])

    def settle(self):
        """As settle_tcp(), and every connection's answer finished (its first bytes and handshake known)."""
        settle_tcp(self)
        wait_for(lambda: len(self.seen.of("done")) >= len(self.seen.of("accept")), "finished its connections")

    def handshakes(self):
        return [event[0] for event in self.seen.of("handshake")]

    def first_bytes(self):
        return [event[0] for event in self.seen.of("first")]

    def close(self):
        try:
            self.server.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.server.close()
        self.thread.join()


class UdpEcho:
    """A UDP echo on 127.0.0.1: each datagram recorded ("datagram", data) and sent back."""

    def __init__(self):
        self.seen = Recorder()
        self.sentinels = 0
        self.server = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.server.bind(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while True:
            try:
                data, peer = self.server.recvfrom(65536)
            except OSError:
                return
            if data == b"\0stop":
                return
            if data.startswith(b"\0settle"):
                self.seen.add("settle", data)
                continue
            self.seen.add("datagram", data)
            self.server.sendto(data, peer)

    def settle(self):
        """Returns once every datagram sent before the call was received: a sentinel sent after them is."""
        self.sentinels += 1
        marker = b"\0settle %d" % self.sentinels
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as client:
            client.sendto(marker, ("127.0.0.1", self.port))
        wait_for(lambda: (marker,) in self.seen.of("settle"), "received the sentinel datagram")

    def received(self):
        return [event[0] for event in self.seen.of("datagram")]

    def close(self):
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as stopper:
            stopper.sendto(b"\0stop", ("127.0.0.1", self.port))
        self.thread.join()
        self.server.close()


class Fixtures:
    """All of them at once, under `place`; clear() forgets what they saw, close() stops them."""

    def __init__(self, place):
        self.place = place
        self.cert, self.key = make_certificate(place)
        self.closers = []
        try:
            self.dns = self._keep(Dnsmasq(place))
            self.http = self._keep(HttpServer())
            self.tls = self._keep(TlsServer(self.cert, self.key))
            self.udp = self._keep(UdpEcho())
        except BaseException:
            self.close()
            raise

    def _keep(self, fixture):
        self.closers.append(fixture.close)
        return fixture

    def settle(self):
        """Every fixture has recorded all that reached it before the call."""
        self.dns.settle()
        self.http.settle()
        self.tls.settle()
        self.udp.settle()

    def clear(self):
        """Forgets what the fixtures saw (after they recorded all of it)."""
        self.settle()
        self.http.seen.clear()
        self.tls.seen.clear()
        self.udp.seen.clear()

    def close(self):
        for close in reversed(self.closers):
            close()
        self.closers = []
