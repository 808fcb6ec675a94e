# SPDX-License-Identifier: MIT
"""A throwaway OpenSSH server on 127.0.0.1 for the remote provider's tests.

Debian's sshd runs as a child with its own config, host key, user key and
authorized_keys in a temporary directory under $DSH_TEST_SCRATCH; the client
reaches it through an ssh config file of its own (never ~/.ssh), and the
"remote" dsh-sandbox keeps its state in a directory of its own.
"""
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

SSHD = "/usr/sbin/sshd"



def default_stopping_signals():
    """In a child before exec: SIGHUP, SIGINT and SIGTERM at their defaults.  A suite started under
    nohup (or by a runner that ignores them) would otherwise hand the ignored dispositions down, and
    a signal ignored at start stays ignored by design, in dsh-sandbox and in a POSIX shell's trap."""
    for number in (signal.SIGHUP, signal.SIGINT, signal.SIGTERM):
        signal.signal(number, signal.SIG_DFL)

class SkipTest(Exception):
    """The host truly lacks what the tests need (no sshd)."""


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def write(path, text, mode=0o644):
    with open(path, "w") as handle:
        handle.write(text)
    os.chmod(path, mode)


def read(path):
    with open(path) as handle:
        return handle.read()


class SshServer:
    def __init__(self, dsh_sandbox, clean_home=False):
        """`clean_home`: the sessions get an empty HOME of their own, so no login shell start-up file runs."""
        if not os.access(SSHD, os.X_OK) or not shutil.which("ssh-keygen") or not shutil.which("ssh"):
            raise SkipTest("openssh-server/openssh-client not installed (scripts/ensure-deps.sh installs them)")
        scratch = os.environ.get("DSH_TEST_SCRATCH", "/var/tmp/dsh-sandbox-tests")
        os.makedirs(scratch, exist_ok=True)
        self.dir = tempfile.mkdtemp(prefix="remote-", dir=scratch)
        os.chmod(self.dir, 0o755)
        self.dsh_sandbox = dsh_sandbox
        self.log = os.path.join(self.dir, "sshd.log")
        # Privilege separation needs its empty directory.
        os.makedirs("/run/sshd", mode=0o755, exist_ok=True)
        for name in ("host_key", "user_key"):
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", os.path.join(self.dir, name)],
                           check=True)
        shutil.copy(os.path.join(self.dir, "user_key.pub"), os.path.join(self.dir, "authorized_keys"))
        write(os.path.join(self.dir, "empty_known_hosts"), "")
        self.remote_state = os.path.join(self.dir, "remote-state")
        os.makedirs(self.remote_state)
        # The remote dsh-sandbox: the build tree's, with a state directory of its own.  The helper never
        # writes to its stderr (everything it says is a frame): what lands there (a sanitizer's report) is
        # kept for helper_diagnostics().
        self.helper_stderr = os.path.join(self.dir, "helper-stderr")
        self.remote_program = self.remote_wrapper("remote-dsh-sandbox", "")
        self.ssh_config = os.path.join(self.dir, "ssh_config")
        home_setting = self.clean_home_setting(clean_home)
        # A free port can be taken between the probe and sshd's bind (tests run in parallel): then another.
        for attempt in range(5):
            self.configure(free_port(), home_setting)
            if self.start():
                return
        raise SkipTest("sshd cannot start: " + read(self.log).strip())

    def configure(self, port, home_setting):
        """The server's config, the client's ssh config and known_hosts, for `port`."""
        user = os.environ.get("USER") or "root"
        self.port = port
        write(os.path.join(self.dir, "sshd_config"),
              "ListenAddress 127.0.0.1\nPort %d\nHostKey %s/host_key\nAuthorizedKeysFile %s/authorized_keys\n"
              "StrictModes no\nPidFile %s/sshd.pid\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n"
              "UsePAM no\nPermitRootLogin prohibit-password\nLogLevel VERBOSE\nMaxSessions 50\n"
              "MaxStartups 50\nAcceptEnv LANG\n%s" % (port, self.dir, self.dir, self.dir, home_setting))
        write(os.path.join(self.dir, "known_hosts"),
              "[127.0.0.1]:%d %s" % (port, read(os.path.join(self.dir, "host_key.pub"))))
        known = "  UserKnownHostsFile %s/known_hosts\n  GlobalKnownHostsFile /dev/null\n" % self.dir
        login = "  HostName 127.0.0.1\n  Port %d\n  User %s\n  IdentityFile %s/user_key\n  IdentitiesOnly yes\n" % (
            port, user, self.dir)
        write(self.ssh_config,
              "Host remote-test\n" + login + known + "  StrictHostKeyChecking yes\n"
              "Host unknown-key\n" + login +
              "  UserKnownHostsFile %s/empty_known_hosts\n  GlobalKnownHostsFile /dev/null\n" % self.dir +
              "Host unreachable\n  HostName 127.0.0.1\n  Port %d\n  ConnectTimeout 5\n" % free_port() +
              "Host own-mux\n" + login + known +
              "  ControlMaster auto\n  ControlPath %s/own-mux/%%C\n  ControlPersist 60\n" % self.own_mux_dir())

    def start(self):
        """Starts sshd; True once it listens, False when it exited (its log says why)."""
        self.stderr = open(self.log, "w")
        self.process = subprocess.Popen([SSHD, "-D", "-e", "-f", os.path.join(self.dir, "sshd_config")],
                                        stdout=subprocess.DEVNULL, stderr=self.stderr,
                                        preexec_fn=default_stopping_signals)
        if self.wait_listening():
            return True
        self.stderr.close()
        return False

    def clean_home_setting(self, clean_home):
        if not clean_home:
            return ""
        home = os.path.join(self.dir, "home")
        os.mkdir(home)
        return "SetEnv HOME=%s\n" % home

    def own_mux_dir(self):
        """The control directory the user's own ssh config names for host own-mux (short: a socket path)."""
        if not hasattr(self, "_own_mux"):
            self._own_mux = tempfile.mkdtemp(prefix="dshu", dir="/var/tmp")
            os.mkdir(os.path.join(self._own_mux, "own-mux"), 0o700)
        return self._own_mux

    def remote_wrapper(self, name, exports):
        """A remoteProgram running this build's dsh-sandbox with the remote state directory and `exports`."""
        return self.wrapper(name, 'export DSH_SANDBOX_STATE_DIR=%s %s\nexec %s "$@" 2>>%s\n'
                            % (self.remote_state, exports, self.dsh_sandbox, self.helper_stderr))

    def helper_diagnostics(self):
        """What the remote helpers wrote to their stderr: nothing, unless something went wrong."""
        return read(self.helper_stderr) if os.path.exists(self.helper_stderr) else ""

    def wrapper(self, name, body):
        path = os.path.join(self.dir, name)
        write(path, "#!/bin/sh\n" + body, 0o755)
        return path

    def wait_listening(self):
        """Readiness, not timing: polls until the port accepts (True) or sshd exited (False)."""
        while self.process.poll() is None:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return True
            except OSError:
                time.sleep(0.05)
        return False

    def stop_shared_connections(self, runtime_dir):
        """Ends the masters a test left in `runtime_dir`'s control directory (they would idle for minutes)."""
        control = os.path.join(runtime_dir, "dsh-sandbox", "ssh")
        for name in os.listdir(control) if os.path.isdir(control) else ():
            subprocess.run(["ssh", "-F", self.ssh_config, "-o", "ControlPath=" + os.path.join(control, name),
                            "-O", "exit", "remote-test"], capture_output=True, timeout=60)

    def connections(self):
        """How many TCP connections sshd has accepted so far."""
        self.stderr.flush()
        return read(self.log).count("Connection from 127.0.0.1")

    def close(self):
        own = os.path.join(self.own_mux_dir(), "own-mux")
        for name in os.listdir(own):
            subprocess.run(["ssh", "-F", self.ssh_config, "-o", "ControlPath=" + os.path.join(own, name),
                            "-O", "exit", "own-mux"], capture_output=True, timeout=60)
        shutil.rmtree(self.own_mux_dir(), ignore_errors=True)
        self.process.terminate()
        self.process.wait()
        self.stderr.close()


def serve(dsh_sandbox, clean_home):
    """For bench/remote.bench.sh: start the server, print where its files are, serve until SIGTERM."""
    import signal
    import sys

    server = SshServer(dsh_sandbox, clean_home)
    signal.signal(signal.SIGTERM, lambda number, frame: sys.exit(0))
    try:
        print("ready %s %s %s" % (server.dir, server.ssh_config, server.remote_program), flush=True)
        while True:
            signal.pause()
    finally:
        server.close()


if __name__ == "__main__":
    import sys

    try:
        serve(sys.argv[1], sys.argv[2:] == ["clean-home"])
    except SkipTest as reason:
        print("skip %s" % reason, flush=True)
