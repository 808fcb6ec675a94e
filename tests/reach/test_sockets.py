# SPDX-License-Identifier: MIT
"""What a confined command can reach through sockets (issue 19, item 3), on the real kernel.

The test plays the host: it starts "daemons" of its own (a unix stream server on a pathname outside
every root, one on an abstract name, one in the host's /tmp, one inside the workspace, TCP servers on
loopback) and each writes a canary file when a client connects.  A confined command (`dsh-sandbox
run`, python3 inside) tries to reach them; a refusal is judged by the command's errno *and* by the
canary, which must not appear.  Every case runs on both backends.
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import threading
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "livability"))
import livability  # noqa: E402

BIN = livability.BIN
MODES = ("read-only", "workspace-write")


class Daemon:
    """A unix stream server (a pathname, or '@name' for an abstract one) that records each client on disk."""

    def __init__(self, address, canary):
        self.canary = canary
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind("\0" + address[1:] if address.startswith("@") else address)
        self.server.listen(16)
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        while True:
            try:
                client, _ = self.server.accept()
            except OSError:
                return
            peer = b""
            if client.family == socket.AF_UNIX:
                peer = client.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12)
            with open(self.canary, "a", encoding="utf-8") as canary:
                canary.write(f"reached {int.from_bytes(peer[:4], 'little') if peer else 0}\n")
            client.sendall(b"hi")
            client.close()

    def reached(self):
        return os.path.exists(self.canary)

    def close(self):
        # shutdown wakes the accept of the serving thread (close alone would leave it waiting on the old
        # file), so no thread of an earlier case is left to answer, or to write a canary, in a later one.
        try:
            self.server.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.thread.join()
        self.server.close()


class TcpServer(Daemon):
    """The same on loopback TCP: internet sockets pass for now."""

    def __init__(self, canary):  # pylint: disable=super-init-not-called
        self.canary = canary
        self.server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.server.bind(("127.0.0.1", 0))
        self.server.listen(16)
        self.port = self.server.getsockname()[1]
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()


CONNECT = textwrap.dedent("""
    import socket, sys
    family = socket.AF_INET if sys.argv[1] == "tcp" else socket.AF_UNIX
    address = ("127.0.0.1", int(sys.argv[2])) if family == socket.AF_INET else sys.argv[2]
    if isinstance(address, str) and address.startswith("@"):
        address = "\\0" + address[1:]
    client = socket.socket(family, socket.SOCK_STREAM)
    if len(sys.argv) > 3 and sys.argv[3] == "nonblocking":
        client.setblocking(False)
        error = client.connect_ex(address)
        if error not in (0, 115):
            print("errno", error); sys.exit(0)
        client.setblocking(True)
        import select; select.select([client], [], [], None)
        error = client.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
        print("errno", error) if error else print("connected", client.recv(2).decode())
        sys.exit(0)
    try:
        client.connect(address)
        print("connected", client.recv(2).decode())
    except OSError as error:
        print("errno", error.errno)
""")

DATAGRAMS = textwrap.dedent("""
    import errno, socket
    def attempt(make):
        try:
            make(); return "made"
        except OSError as error:
            return errno.errorcode.get(error.errno, str(error.errno))
    print("dgram", attempt(lambda: socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)))
    print("dgram-cloexec", attempt(lambda: socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC
                                                                          | socket.SOCK_NONBLOCK)))
    print("raw", attempt(lambda: socket.socket(socket.AF_UNIX, socket.SOCK_RAW)))
    print("pair-dgram", attempt(lambda: socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)))
    print("pair-stream", attempt(lambda: socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)))
    print("seqpacket", attempt(lambda: socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)))
    print("udp", attempt(lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM)))
""")

# Addresses the kernel itself refuses, sent raw: the supervisor must answer as the kernel does, and read
# nothing past what the kernel would (an overlong sockaddr_un, a length beyond sockaddr_storage, a
# negative one).
HOSTILE_ADDRESSES = textwrap.dedent("""
    import ctypes, socket
    libc = ctypes.CDLL(None, use_errno=True)
    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    buffer = ctypes.create_string_buffer(b"\\x01\\x00" + b"/" * 254, 256)
    for length in (128, 110, 111, 200, -1):
        result = libc.connect(client.fileno(), buffer, ctypes.c_int(length))
        print(length, result, ctypes.get_errno())
""")

# A symlink in the workspace flipped, as fast as the command can, between its own socket and a host
# daemon's: connects through it reach the command's own server or are refused, never the daemon, since
# the supervisor connects to the inode it checked, not to the name again.
FLIP = textwrap.dedent("""
    import errno, os, socket, sys, threading
    host, rounds = sys.argv[1], int(sys.argv[2])
    server = socket.socket(socket.AF_UNIX); server.bind("own.sock"); server.listen(64)
    threading.Thread(target=lambda: [server.accept()[0].close() for _ in iter(int, 1)], daemon=True).start()
    os.symlink("own.sock", "flip")
    direct = socket.socket(socket.AF_UNIX); direct.connect("flip"); direct.close()  # its own: reached
    done = False
    def flipper():
        targets = [host, "own.sock"]
        i = 0
        while not done:
            os.symlink(targets[i % 2], "flip.new"); os.rename("flip.new", "flip"); i += 1
    threading.Thread(target=flipper, daemon=True).start()
    outcomes = {}
    for _ in range(rounds):
        client = socket.socket(socket.AF_UNIX)
        try:
            client.connect("flip"); key = "connected"
        except OSError as error:
            key = errno.errorcode.get(error.errno, str(error.errno))
        client.close()
        outcomes[key] = outcomes.get(key, 0) + 1
    done = True
    print(" ".join(f"{key}={count}" for key, count in sorted(outcomes.items())))
""")

# Thread A connects (blocking) to a server whose backlog is full: its SYN goes unanswered.  Thread B
# waits until A is inside connect (its /proc syscall number), then makes a supervised call of its
# own: it must complete while A's connect is still pending.
STALL = textwrap.dedent("""
    import os, socket, sys, threading
    port, target, mode = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    events = []
    def connect():
        client = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        tid.append(threading.get_native_id())
        try:
            client.connect(("127.0.0.1", port))
        except OSError:
            pass
        events.append("connect returned")
    tid = []
    worker = threading.Thread(target=connect, daemon=True)
    worker.start()
    while not tid:
        pass
    while True:
        with open(f"/proc/self/task/{tid[0]}/syscall") as status:
            if status.read().split()[0] == str(CONNECT_NR):
                break
    if mode == "workspace-write":
        os.chmod(target, 0o600)
        events.append("chmod done")
    other = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    other.connect(("127.0.0.1", int(sys.argv[4])))
    events.append("second connect done")
    print(" / ".join(events), flush=True)
    sys.stdin.read()
    worker.join()
""").replace("CONNECT_NR", "42" if os.uname().machine == "x86_64" else "203")
STALL_CONNECT_NR = "42" if os.uname().machine == "x86_64" else "203"


# 40 threads make a blocking connect that waits (a full backlog): the supervisor performs at most 32 at
# once, so 8 are answered EAGAIN at once; the program prints how many, once each thread is either
# answered or waiting inside connect.
WORKER_BOUND = textwrap.dedent("""
    import errno, socket, sys, threading, time
    port = int(sys.argv[1])
    answers, tids = [], []
    def connect():
        tids.append(threading.get_native_id())
        try:
            socket.socket().connect(("127.0.0.1", port)); answers.append("connected")
        except OSError as error:
            answers.append(errno.errorcode.get(error.errno, str(error.errno)))
    threads = [threading.Thread(target=connect, daemon=True) for _ in range(40)]
    for thread in threads:
        thread.start()
    def waiting():
        count = 0
        for tid in list(tids):
            try:
                with open(f"/proc/self/task/{tid}/syscall") as status:
                    count += status.read().split()[0] == "CONNECT_NR"
            except OSError:
                pass
        return count
    # A thread whose connect waits for the supervisor shows the call too: wait (bounded) for the 8 answers.
    deadline = time.monotonic() + 60
    while (len(tids) < 40 or len(answers) + waiting() < 40 or len(answers) < 8) and time.monotonic() < deadline:
        time.sleep(0.01)
    print(sorted(answers).count("EAGAIN"), len(answers), flush=True)
    sys.stdin.read()
""").replace("CONNECT_NR", "42" if os.uname().machine == "x86_64" else "203")


def backends():
    found = []
    if livability.landlock_abi() > 0:
        found.append("landlock")
    if livability.bwrap_works():
        found.append("bwrap")
    return found


class SocketReach:
    """The cases, once per backend (the classes below); each runs in both confined modes."""
    backend = None

    def setUp(self):
        if self.backend not in backends():
            self.skipTest(f"{self.backend} does not work on this host")
        os.makedirs(livability.SCRATCH, exist_ok=True)
        self.place = tempfile.mkdtemp(prefix="reach-sockets-", dir=livability.SCRATCH)
        self.workspace = os.path.join(self.place, "workspace")
        os.mkdir(self.workspace)
        self.closers = []
        self.tmp_place = None
        self.addCleanup(shutil.rmtree, self.place, True)

    def tearDown(self):
        for close in self.closers:
            close()
        if self.tmp_place:
            shutil.rmtree(self.tmp_place, ignore_errors=True)

    def daemon(self, address, name):
        daemon = Daemon(address, os.path.join(self.place, name + ".canary"))
        self.closers.append(daemon.close)
        return daemon

    def tcp(self, name):
        server = TcpServer(os.path.join(self.place, name + ".canary"))
        self.closers.append(server.close)
        return server

    def stuck_listener(self):
        """A loopback TCP listener whose accept queue is full and never drained: the next SYN is dropped,
        so a blocking connect to it waits (for minutes). Returns the listening socket."""
        stuck = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        stuck.bind(("127.0.0.1", 0))
        stuck.listen(0)
        self.closers.append(stuck.close)
        for _ in range(3):
            filler = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            filler.setblocking(False)
            filler.connect_ex(stuck.getsockname())
            self.closers.append(filler.close)
        return stuck

    def run_confined(self, backend, mode, program, *arguments, extra=(), stdin=None):
        argv = [BIN, "run", "--backend", backend, "--mode", mode, "--root", self.workspace, *extra, "--",
                "python3", "-c", program, *arguments]
        return subprocess.run(argv, capture_output=True, text=True, check=False, cwd=self.workspace,
                              input=stdin, timeout=120)

    def each(self, body):
        for mode in MODES:
            with self.subTest(mode=mode):
                body(self.backend, mode)

    def assert_refused(self, backend, mode, daemon, address, extra=()):
        outcome = self.run_confined(backend, mode, CONNECT, "unix", address, extra=extra)
        self.assertEqual(outcome.stdout.strip(), "errno 13", f"{backend} {mode}: {outcome.stdout}{outcome.stderr}")
        self.assertFalse(daemon.reached(), f"{backend} {mode}: the daemon's canary appeared")

    def assert_reached(self, backend, mode, daemon, address, extra=()):
        outcome = self.run_confined(backend, mode, CONNECT, "unix", address, extra=extra)
        self.assertEqual(outcome.stdout.strip(), "connected hi", f"{backend} {mode}: {outcome.stdout}{outcome.stderr}")
        self.assertTrue(daemon.reached(), f"{backend} {mode}: the daemon never saw the client")

    def test_host_daemon_outside_every_root_is_refused(self):
        path = os.path.join(self.place, "daemon.sock")
        daemon = self.daemon(path, "outside")
        self.each(lambda backend, mode: self.assert_refused(backend, mode, daemon, path))

    def test_host_daemon_through_a_symlink_in_the_workspace_is_refused(self):
        path = os.path.join(self.place, "daemon.sock")
        daemon = self.daemon(path, "linked")
        os.symlink(path, os.path.join(self.workspace, "innocent.sock"))
        self.each(lambda backend, mode: self.assert_refused(backend, mode, daemon, "innocent.sock"))

    def test_a_hard_link_of_the_daemons_socket_into_the_workspace_is_refused(self):
        path = os.path.join(self.place, "daemon.sock")
        daemon = self.daemon(path, "hardlink")
        link = os.path.join(self.workspace, "linked.sock")

        def body(backend, mode):
            outcome = subprocess.run([BIN, "run", "--backend", backend, "--mode", mode, "--root", self.workspace,
                                      "--", "ln", path, link], capture_output=True, text=True, check=False)
            self.assertNotEqual(outcome.returncode, 0, f"{backend} {mode}: the link was made")
            self.assertFalse(os.path.lexists(link))
            self.assert_refused(backend, mode, daemon, path)
        self.each(body)

    def test_a_hard_link_out_of_the_hosts_tmp_is_refused(self):
        # /tmp is writable under Landlock workspace-write, but nothing may be linked out of it (no REFER on a
        # directory every user shares): a link of tmux's socket into the workspace would be "the command's own".
        # The filesystems differ on some hosts, where the kernel refuses the link itself: nothing to show then.
        if os.stat("/tmp").st_dev != os.stat(self.workspace).st_dev:
            self.skipTest("/tmp and the workspace are on different filesystems: a link between them is EXDEV anyway")
        self.tmp_place = tempfile.mkdtemp(prefix="dsh-reach-", dir="/tmp")
        path = os.path.join(self.tmp_place, "tmux-like.sock")
        daemon = self.daemon(path, "tmp-link")
        link = os.path.join(self.workspace, "linked.sock")
        outcome = subprocess.run([BIN, "run", "--backend", self.backend, "--mode", "workspace-write", "--root",
                                  self.workspace, "--", "sh", "-c", 'ln "$1" "$2"; echo "ln $?"', "sh", path, link],
                                 capture_output=True, text=True, check=False)
        self.assertEqual(outcome.stdout.strip(), "ln 1", outcome.stdout + outcome.stderr)
        # Landlock: EXDEV; bwrap: the command's /tmp is its own, the host's socket is not even there.
        expected = "Invalid cross-device link" if self.backend == "landlock" else "No such file or directory"
        self.assertIn(expected, outcome.stderr)
        self.assertFalse(os.path.lexists(link))
        self.assertFalse(daemon.reached())

    def test_blocking_connects_in_flight_are_bounded(self):
        def body(backend, mode):
            stuck = self.stuck_listener()
            argv = [BIN, "run", "--backend", backend, "--mode", mode, "--root", self.workspace, "--",
                    "python3", "-c", WORKER_BOUND, str(stuck.getsockname()[1])]
            with subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True) as process:
                line = process.stdout.readline().split()
                process.kill()  # the 32 still waiting end with the command (workers cancelled)
                process.communicate(timeout=120)
            self.assertEqual(line, ["8", "8"], "32 connects in the supervisor's hands, 8 answered EAGAIN")
        self.each(body)

    def test_hostile_address_lengths_get_the_kernels_answers(self):
        def body(backend, mode):
            outcome = self.run_confined(backend, mode, HOSTILE_ADDRESSES)
            self.assertEqual(outcome.stdout, unconfined.stdout, outcome.stderr)
        # The kernel's own answers are the oracle: the same program, unconfined.
        unconfined = subprocess.run(["python3", "-c", HOSTILE_ADDRESSES], capture_output=True, text=True, check=True)
        self.assertEqual(len(unconfined.stdout.splitlines()), 5, unconfined.stdout)
        self.each(body)

    def test_a_flipped_symlink_never_reaches_the_daemon(self):
        path = os.path.join(self.place, "daemon.sock")
        daemon = self.daemon(path, "flip")
        outcome = self.run_confined(self.backend, "workspace-write", FLIP, path, "400")
        counts = dict(item.split("=") for item in outcome.stdout.split())
        self.assertEqual(outcome.returncode, 0, outcome.stderr)  # the direct connect to its own socket worked
        self.assertTrue(set(counts) <= {"connected", "EACCES"}, outcome.stdout)
        self.assertFalse(daemon.reached(), f"the daemon was reached through the flipped link: {outcome.stdout}")

    def test_sendto_on_a_stream_socket_reaches_nothing(self):
        path = os.path.join(self.place, "daemon.sock")
        daemon = self.daemon(path, "sendto")
        program = ("import socket, sys\n"
                   "client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\n"
                   "try:\n    client.sendto(b'x', sys.argv[1]); print('sent')\n"
                   "except OSError as error:\n    print('errno', error.errno)\n")

        def body(backend, mode):
            outcome = self.run_confined(backend, mode, program, path)
            self.assertIn(outcome.stdout.strip(), ("errno 95", "errno 106"), outcome.stdout + outcome.stderr)
            self.assertFalse(daemon.reached())
        self.each(body)

    def test_the_peer_sees_the_supervisors_process(self):
        path = os.path.join(self.workspace, "own.sock")
        daemon = self.daemon(path, "peer")
        argv = [BIN, "run", "--backend", self.backend, "--mode", "workspace-write", "--root", self.workspace, "--",
                "python3", "-c", CONNECT, "unix", "own.sock"]
        with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              cwd=self.workspace) as run:
            stdout, stderr = run.communicate(timeout=120)
        self.assertEqual(stdout.strip(), "connected hi", stderr)
        with open(daemon.canary, encoding="utf-8") as canary:
            peer_pid = int(canary.read().split()[1])
        # SO_PEERCRED names the process that connected: run's (the supervisor is a thread of it), not the command.
        self.assertEqual(peer_pid, run.pid)

    def test_abstract_daemon_is_refused(self):
        name = f"@dsh-reach-{os.getpid()}-{id(self)}"
        daemon = self.daemon(name, "abstract")
        self.each(lambda backend, mode: self.assert_refused(backend, mode, daemon, name))

    def test_daemon_in_the_hosts_tmp_is_out_of_reach(self):
        # Landlock: the host's /tmp is shared, never the command's own root (refused, EACCES). bwrap: the
        # command's /tmp is a tmpfs or the session's scratch, so the host's socket is not even there (ENOENT).
        self.tmp_place = tempfile.mkdtemp(prefix="dsh-reach-", dir="/tmp")
        path = os.path.join(self.tmp_place, "tmux-like.sock")
        daemon = self.daemon(path, "tmp")
        for mode in MODES:
            with self.subTest(mode=mode):
                if self.backend == "landlock":
                    self.assert_refused(self.backend, mode, daemon, path)
                    continue
                outcome = self.run_confined(self.backend, mode, CONNECT, "unix", path)
                self.assertEqual(outcome.stdout.strip(), "errno 2", f"{mode}: {outcome.stdout}{outcome.stderr}")
                self.assertFalse(daemon.reached(), f"{mode}: the daemon's canary appeared")

    def test_socket_in_the_workspace_is_reached_under_workspace_write(self):
        path = os.path.join(self.workspace, "own.sock")
        daemon = self.daemon(path, "workspace")

        def body(backend, mode):
            if mode == "workspace-write":
                self.assert_reached(backend, mode, daemon, "own.sock")
            else:
                self.assert_refused(backend, mode, daemon, path)
        self.each(body)

    def test_allow_listed_socket_is_reached_in_both_modes(self):
        path = os.path.join(self.place, "agent.sock")
        daemon = self.daemon(path, "agent")

        def body(backend, mode):
            os.path.exists(daemon.canary) and os.unlink(daemon.canary)
            self.assert_reached(backend, mode, daemon, path, extra=("--allow-unix-socket", path))
        self.each(body)

    def test_unix_datagram_sockets_are_refused(self):
        def body(backend, mode):
            outcome = self.run_confined(backend, mode, DATAGRAMS)
            lines = dict(line.split(" ", 1) for line in outcome.stdout.split("\n") if line)
            for kind in ("dgram", "dgram-cloexec", "raw", "pair-dgram"):
                self.assertEqual(lines.get(kind), "EACCES", f"{backend} {mode} {kind}: {outcome.stdout}")
            for kind in ("pair-stream", "seqpacket", "udp"):
                self.assertEqual(lines.get(kind), "made", f"{backend} {mode} {kind}: {outcome.stdout}")
        self.each(body)

    def test_tcp_to_loopback_still_works_blocking_and_not(self):
        def body(backend, mode):
            for style in ("blocking", "nonblocking"):
                server = self.tcp(f"tcp-{backend}-{mode}-{style}")
                outcome = self.run_confined(backend, mode, CONNECT, "tcp", str(server.port), style)
                self.assertEqual(outcome.stdout.strip(), "connected hi", f"{style}: {outcome.stdout}{outcome.stderr}")
                self.assertTrue(server.reached())
        self.each(body)

    def test_a_pending_blocking_connect_does_not_stall_other_calls(self):
        def body(backend, mode):
            stuck = self.stuck_listener()
            good = self.tcp(f"good-{backend}-{mode}")
            target = os.path.join(self.workspace, "file")
            with open(target, "w", encoding="utf-8") as handle:
                handle.write("x")
            os.chmod(target, 0o644)
            argv = [BIN, "run", "--backend", backend, "--mode", mode, "--root", self.workspace, "--",
                    "python3", "-c", STALL, str(stuck.getsockname()[1]), target, mode, str(good.port)]
            process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                       text=True, cwd=self.workspace)
            try:
                line = process.stdout.readline().strip()
            finally:
                stuck.close()  # the pending connect ends (refused), and the command with its stdin
                process.stdin.close()
                process.wait(timeout=120)
            expected = ("chmod done / " if mode == "workspace-write" else "") + "second connect done"
            self.assertEqual(line, expected, process.stderr.read())
            if mode == "workspace-write":
                self.assertEqual(os.stat(target).st_mode & 0o777, 0o600)
        self.each(body)


class LandlockSocketReach(SocketReach, unittest.TestCase):
    backend = "landlock"

    def test_a_pending_connect_ends_with_its_command(self):
        """landlock-run serves until the command is gone, then stops its workers: a connect still waiting
        (a SYN nobody answers, for minutes) is cancelled, and the launcher ends as the command did."""
        launcher = os.environ.get("LANDLOCK_RUN_BIN") or os.path.join(os.path.dirname(BIN), "landlock-run")
        stuck = self.stuck_listener()
        program = ("import os, socket\nprint(os.getpid(), flush=True)\n"
                   f"socket.socket().connect(('127.0.0.1', {stuck.getsockname()[1]}))\n")
        for grants in (["--ro", "/"], ["--ro", "/", "--rw", self.workspace]):
            with self.subTest(grants=grants):
                with subprocess.Popen([launcher, *grants, "--", "python3", "-c", program], stdout=subprocess.PIPE,
                                      text=True) as run:
                    pid = int(run.stdout.readline())
                    while True:  # the command waits in connect, in the supervisor's hands
                        with open(f"/proc/{pid}/syscall", encoding="utf-8") as status:
                            if status.read().split()[0] == STALL_CONNECT_NR:
                                break
                    os.kill(pid, signal.SIGKILL)
                    self.assertEqual(run.wait(timeout=60), -signal.SIGKILL)


class BwrapSocketReach(SocketReach, unittest.TestCase):
    backend = "bwrap"


class AllowListCarried(unittest.TestCase):
    """The allow-list travels as --allow-write does: the config, serve's per-call params, the bash tool."""

    def setUp(self):
        if livability.landlock_abi() <= 0:
            self.skipTest("Landlock is not enforced on this host")
        os.makedirs(livability.SCRATCH, exist_ok=True)
        self.place = tempfile.mkdtemp(prefix="reach-allow-", dir=livability.SCRATCH)
        self.addCleanup(shutil.rmtree, self.place, True)
        self.workspace = os.path.join(self.place, "workspace")
        os.mkdir(self.workspace)
        self.socket = os.path.join(self.place, "agent.sock")
        self.daemon = Daemon(self.socket, os.path.join(self.place, "agent.canary"))
        self.addCleanup(self.daemon.close)
        self.env = dict(os.environ, DSH_SANDBOX_STATE_DIR=os.path.join(self.place, "state"),
                        XDG_CACHE_HOME=os.path.join(self.place, "cache"),
                        XDG_CONFIG_HOME=os.path.join(self.place, "config"))
        self.env.pop("DSH_SANDBOX_CONFIG", None)

    def config(self, **values):
        path = os.path.join(self.place, "config.json")
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(values, handle)
        return path

    def test_config_allow_unix_sockets(self):
        for allowed, expected in (([], "errno 13"), ([self.socket], "connected hi")):
            config = self.config(allowUnixSockets=allowed) if allowed else self.config()
            outcome = subprocess.run([BIN, "run", "--config", config, "--backend", "landlock", "--mode", "read-only",
                                      "--root", self.workspace, "--", "python3", "-c", CONNECT, "unix", self.socket],
                                     capture_output=True, text=True, check=False, env=self.env, timeout=120)
            self.assertEqual(outcome.stdout.strip(), expected, outcome.stderr)
            self.assertEqual(self.daemon.reached(), bool(allowed))

    def test_config_refuses_a_relative_socket_path(self):
        config = self.config(allowUnixSockets=["agent.sock"])
        outcome = subprocess.run([BIN, "run", "--config", config, "--", "true"], capture_output=True, text=True,
                                 check=False, env=self.env)
        self.assertNotEqual(outcome.returncode, 0)
        self.assertIn("allowUnixSockets", outcome.stderr)

    def test_serve_bash_run_carries_allow_unix_sockets(self):
        config = self.config(backends=["landlock"])
        command = f"python3 -c '{CONNECT}' unix {self.socket}"
        requests = [{"jsonrpc": "2.0", "id": 1, "method": "bash.run",
                     "params": {"mode": "read-only", "root": self.workspace, "command": command}},
                    {"jsonrpc": "2.0", "id": 2, "method": "bash.run",
                     "params": {"mode": "read-only", "root": self.workspace, "command": command,
                                "allowUnixSockets": [self.socket]}}]
        answers = []
        with subprocess.Popen([BIN, "serve", "--config", config], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=self.env, cwd=self.place) as server:
            for request in requests:
                server.stdin.write(json.dumps(request) + "\n")
                server.stdin.flush()
                answers.append(json.loads(server.stdout.readline()))
                if request["id"] == 1:
                    self.assertFalse(self.daemon.reached(), "reached without the allow-list")
            server.stdin.close()
            server.wait(timeout=60)
        self.assertEqual(answers[0]["result"]["stdout"]["text"].strip(), "errno 13", answers[0])
        self.assertEqual(answers[1]["result"]["stdout"]["text"].strip(), "connected hi", answers[1])
        self.assertTrue(self.daemon.reached())

    def test_bash_tool_carries_allow_unix_socket(self):
        outcome = subprocess.run([BIN, "bash", "--backend", "landlock", "--mode", "read-only", "--root",
                                  self.workspace, "--allow-unix-socket", self.socket, "--",
                                  f"python3 -c '{CONNECT}' unix {self.socket}"],
                                 capture_output=True, text=True, check=False, env=self.env, timeout=120)
        self.assertIn("connected hi", outcome.stdout, outcome.stderr)
        self.assertTrue(self.daemon.reached())


class FailClosed(unittest.TestCase):
    """Where the supervisor cannot take the command's socket, every connect is refused, and said."""

    def setUp(self):
        self.refuse = os.environ.get("REFUSE_EXEC_BIN", "")
        if not self.refuse or not os.access(self.refuse, os.X_OK):
            self.skipTest("REFUSE_EXEC_BIN is not set (run through meson test)")
        if livability.landlock_abi() <= 0:
            self.skipTest("Landlock is not enforced on this host")
        os.makedirs(livability.SCRATCH, exist_ok=True)
        self.place = tempfile.mkdtemp(prefix="reach-closed-", dir=livability.SCRATCH)
        self.addCleanup(shutil.rmtree, self.place, True)

    def test_without_pidfd_getfd_every_connect_is_refused(self):
        server = TcpServer(os.path.join(self.place, "tcp.canary"))
        self.addCleanup(server.close)
        for mode in MODES:
            with self.subTest(mode=mode):
                outcome = subprocess.run([self.refuse, "pidfd_getfd", BIN, "run", "--backend", "landlock", "--mode",
                                          mode, "--root", self.place, "--", "python3", "-c", CONNECT, "tcp",
                                          str(server.port)], capture_output=True, text=True, check=False,
                                         timeout=120)
                self.assertEqual(outcome.stdout.strip(), "errno 13", outcome.stderr)
                self.assertFalse(server.reached(), "the connect went through without the supervisor")
                self.assertIn("pidfd_getfd", outcome.stderr)

    def test_probe_says_so(self):
        outcome = subprocess.run([self.refuse, "pidfd_getfd", BIN, "probe", "--backend", "landlock"],
                                 capture_output=True, text=True, check=False, timeout=120)
        self.assertIn("every connect of a confined command is refused", outcome.stdout + outcome.stderr)

    def test_without_process_vm_readv_a_read_only_connect_is_refused(self):
        server = TcpServer(os.path.join(self.place, "vm.canary"))
        self.addCleanup(server.close)
        outcome = subprocess.run([self.refuse, "process_vm_readv", BIN, "run", "--backend", "landlock", "--mode",
                                  "read-only", "--root", self.place, "--", "python3", "-c", CONNECT, "tcp",
                                  str(server.port)], capture_output=True, text=True, check=False, timeout=120)
        self.assertEqual(outcome.stdout.strip(), "errno 13", outcome.stderr)
        self.assertFalse(server.reached())


class RealTools(unittest.TestCase):
    """What must keep working with every connect supervised."""

    def setUp(self):
        os.makedirs(livability.SCRATCH, exist_ok=True)
        self.place = tempfile.mkdtemp(prefix="reach-tools-", dir=livability.SCRATCH)
        self.workspace = os.path.join(self.place, "workspace")
        os.mkdir(self.workspace)

    def tearDown(self):
        shutil.rmtree(self.place, ignore_errors=True)

    def run_in(self, backend, mode, *command):
        return subprocess.run([BIN, "run", "--backend", backend, "--mode", mode, "--root", self.workspace, "--",
                               *command], capture_output=True, text=True, check=False, cwd=self.workspace,
                              timeout=300)

    def test_git_clone_from_a_local_path(self):
        if not shutil.which("git"):
            self.skipTest("git is not installed")
        source = os.path.join(self.place, "source")
        subprocess.run(["git", "init", "-q", source], check=True)
        subprocess.run(["git", "-C", source, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q",
                        "--allow-empty", "-m", "one"], check=True)
        for backend in backends():
            with self.subTest(backend=backend):
                clone = os.path.join(self.workspace, f"clone-{backend}")
                outcome = self.run_in(backend, "workspace-write", "git", "clone", "-q", source, clone)
                self.assertEqual(outcome.returncode, 0, outcome.stderr)
                self.assertTrue(os.path.isdir(os.path.join(clone, ".git")))

    def test_allow_unix_socket_names_a_missing_or_wrong_path(self):
        missing = os.path.join(self.place, "missing.sock")
        outcome = subprocess.run([BIN, "run", "--allow-unix-socket", missing, "--", "true"], capture_output=True,
                                 text=True, check=False)
        self.assertEqual(outcome.returncode, 2, outcome.stderr)
        self.assertIn(missing, outcome.stderr)
        self.assertEqual(len(outcome.stderr.strip().splitlines()), 1, outcome.stderr)
        outcome = subprocess.run([BIN, "run", "--allow-unix-socket", self.workspace, "--", "true"],
                                 capture_output=True, text=True, check=False)
        self.assertEqual(outcome.returncode, 2, outcome.stderr)
        self.assertIn("is not a socket", outcome.stderr)

    def test_npm_version(self):
        if not shutil.which("npm"):
            self.skipTest("npm is not installed")
        for backend in backends():
            for mode in MODES:
                with self.subTest(backend=backend, mode=mode):
                    outcome = self.run_in(backend, mode, "npm", "--version")
                    self.assertEqual(outcome.returncode, 0, outcome.stderr)
                    self.assertRegex(outcome.stdout.strip(), r"^\d+\.\d+")


if __name__ == "__main__":
    sys.exit(livability.run_suite(__name__))
