#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The attacker's second look at issue 22 (secrets): a hostile root command on the real kernel and bwrap.

A throwaway home under the scratch directory holds credentials the defaults mask (~/.ssh/id_ed25519,
~/.aws/credentials, ~/.netrc, ~/.config/gh/hosts.yml, ~/.npmrc), each with its own marker, and the
environment holds secret variables.  Each case runs `dsh-sandbox run --backend bwrap|landlock` in
read-only and workspace-write (the workspace a project directory inside the home, unless the case says
it is the home) with a command that tries another way to the secrets: other names (/proc/self/root,
/proc/PID/{root,cwd,environ}, O_PATH and /proc/self/fd, a directory fd), open_by_handle_at, a nested
user and mount namespace (umount, a non-recursive bind, an overlay), sendfile, an inherited descriptor,
a credential created while the command waits, rename tricks across two calls, odd --mask entries, a
home reached through a symlink, and the file guard (`dsh-sandbox fs read`) through symlinks, "..",
and a hard link.  A claim that holds is a passing case that would fail if it did not; a hole not fixed
here prints "# KNOWN: ..." on stderr and counts as skipped.

Output: unittest's verbose form, a "# SKIP: case: reason" line per skip, then "N passed, N failed,
N skipped".
"""
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import unittest
import uuid

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "livability"))
import livability  # noqa: E402

BIN = livability.BIN
MODES = ("read-only", "workspace-write")
PATIENCE = 120
CREDENTIALS = {
    "key": ".ssh/id_ed25519",
    "aws": ".aws/credentials",
    "netrc": ".netrc",
    "gh": ".config/gh/hosts.yml",
    "npm": ".npmrc",
}
SECRET_VARIABLES = ("AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN", "OPENAI_API_KEY", "lowercase_api_key")

# Every other name for the credentials the command can think of, each outcome one line "NAME WHAT":
# WHAT is the bytes read (a marker would show there) or the errno's name.
OTHER_NAMES = textwrap.dedent(r"""
    import ctypes, errno, os, sys
    libc = ctypes.CDLL(None, use_errno=True)
    home = os.environ["HOME"]
    files = [os.path.join(home, relative) for relative in sys.argv[1:]]
    def name(code):
        return errno.errorcode.get(code, str(code))
    def show(label, action):
        try:
            print(label, repr(action()))
        except OSError as failure:
            print(label, name(failure.errno))
    def read(path, **options):
        descriptor = os.open(path, os.O_RDONLY, **options)
        try:
            return os.read(descriptor, 4096)
        finally:
            os.close(descriptor)
    def through_opath(path):
        descriptor = os.open(path, os.O_PATH)
        return read(f"/proc/self/fd/{descriptor}")
    def through_dev_fd(path):
        descriptor = os.open(path, os.O_PATH)
        return read(f"/dev/fd/{descriptor}")
    def through_directory_fd(path):
        directory = os.open(os.path.dirname(path), os.O_RDONLY | os.O_DIRECTORY)
        return read(os.path.basename(path), dir_fd=directory)
    def through_parent_fd(path):
        directory = os.open(os.path.dirname(os.path.dirname(path)), os.O_RDONLY | os.O_DIRECTORY)
        return read(os.path.relpath(path, os.path.dirname(os.path.dirname(path))), dir_fd=directory)
    def through_sendfile(path):
        source = os.open(path, os.O_RDONLY)
        reader, writer = os.pipe()
        os.sendfile(writer, source, 0, 4096)
        os.close(writer)
        return os.read(reader, 4096)
    for index, path in enumerate(files):
        show(f"plain{index}", lambda: read(path))
        show(f"proc_self_root{index}", lambda: read("/proc/self/root" + path))
        show(f"opath_reopen{index}", lambda: through_opath(path))
        show(f"dev_fd{index}", lambda: through_dev_fd(path))
        show(f"directory_fd{index}", lambda: through_directory_fd(path))
        show(f"parent_fd{index}", lambda: through_parent_fd(path))
        show(f"dotdot{index}", lambda: read(os.path.join(os.path.dirname(path), "..", os.path.basename(
            os.path.dirname(path)), os.path.basename(path))))
        show(f"sendfile{index}", lambda: through_sendfile(path))
    # Every process the command can see: its root, its cwd, its environment.
    for pid in sorted(int(entry) for entry in os.listdir("/proc") if entry.isdigit()):
        for index, path in enumerate(files):
            show(f"pid{pid}_root{index}", lambda: read(f"/proc/{pid}/root" + path))
            show(f"pid{pid}_cwd{index}", lambda: read(f"/proc/{pid}/cwd/" + os.path.relpath(path, home)))
        show(f"pid{pid}_environ", lambda: open(f"/proc/{pid}/environ", "rb").read())
    show("own_environment", lambda: repr(dict(os.environ)).encode())
    # A file handle of the .ssh directory, then open_by_handle_at: it needs CAP_DAC_READ_SEARCH.
    class Handle(ctypes.Structure):
        _fields_ = [("size", ctypes.c_uint), ("type", ctypes.c_int), ("bytes", ctypes.c_ubyte * 128)]
    handle, mount_id = Handle(), ctypes.c_int()
    handle.size = 128
    named = libc.name_to_handle_at(-100, os.path.dirname(files[0]).encode(), ctypes.byref(handle),
                                   ctypes.byref(mount_id), 0)
    opened = libc.open_by_handle_at(os.open("/", os.O_RDONLY), ctypes.byref(handle), 0) if named == 0 else -2
    print("open_by_handle_at", "ok" if opened >= 0 else name(ctypes.get_errno()) if opened == -1 else "no-handle")
""")

# io_uring: an openat and a read submitted through a ring, outside the path the system calls take.
IO_URING = r"""
import ctypes, mmap, os, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
params = ctypes.create_string_buffer(120)
ring = libc.syscall(425, 8, params)
if ring < 0:
    print("io_uring_setup", ctypes.get_errno()); sys.exit(0)
sq_entries, cq_entries = struct.unpack_from("II", params, 0)
sq_off = struct.unpack_from("IIIIIIIIQ", params, 40)
cq_off = struct.unpack_from("IIIIIIIIQ", params, 80)
size = max(sq_off[6] + sq_entries * 4, cq_off[5] + cq_entries * 16)
rings = mmap.mmap(ring, size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE, offset=0)
sqes = mmap.mmap(ring, sq_entries * 64, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE, offset=0x10000000)
def submit(opcode, fd, addr, length, offset, op_flags):
    tail = struct.unpack_from("I", rings, sq_off[1])[0]
    mask = struct.unpack_from("I", rings, sq_off[2])[0]
    index = tail & mask
    sqe = bytearray(64)
    struct.pack_into("BBHiQQII Q", sqe, 0, opcode, 0, 0, fd, offset, addr, length, op_flags, 7)
    sqes[index * 64:(index + 1) * 64] = bytes(sqe)
    struct.pack_into("I", rings, sq_off[6] + index * 4, index)
    struct.pack_into("I", rings, sq_off[1], tail + 1)
    done = libc.syscall(426, ring, 1, 1, 1, None, 0)
    head = struct.unpack_from("I", rings, cq_off[0])[0]
    cmask = struct.unpack_from("I", rings, cq_off[2])[0]
    _, res, _ = struct.unpack_from("QiI", rings, cq_off[5] + (head & cmask) * 16)
    struct.pack_into("I", rings, cq_off[0], head + 1)
    return res if done >= 0 else -ctypes.get_errno()
for path in sys.argv[1:]:
    name = ctypes.create_string_buffer(path.encode())
    fd = submit(18, -100, ctypes.addressof(name), 0, 0, os.O_RDONLY)
    if fd < 0:
        print("uring_open", path, "errno", -fd); continue
    buffer = ctypes.create_string_buffer(4096)
    got = submit(22, fd, ctypes.addressof(buffer), 4096, 0, 0)
    print("uring_read", path, got, buffer.raw[:max(got, 0)])
"""

# A user and mount namespace of the command's own, and what it then tries against the masks.
NESTED_NAMESPACE = textwrap.dedent(r"""
    import ctypes, errno, os, sys
    libc = ctypes.CDLL(None, use_errno=True)
    home = os.environ["HOME"]
    def outcome(result):
        return "ok" if result == 0 else errno.errorcode.get(ctypes.get_errno(), "?")
    child = os.fork()
    if child == 0:
        uid, gid = os.getuid(), os.getgid()
        unshared = libc.unshare(0x10000000 | 0x00020000)  # CLONE_NEWUSER | CLONE_NEWNS
        print("unshare", outcome(unshared))
        if unshared == 0:
            try:
                for name, text in (("setgroups", "deny"), ("uid_map", f"0 {uid} 1"), ("gid_map", f"0 {gid} 1")):
                    with open(f"/proc/self/{name}", "w") as handle:
                        handle.write(text)
            except OSError as failure:
                print("maps", errno.errorcode.get(failure.errno))
            work = "/tmp/nested"
            for directory in ("mnt", "upper", "work", "empty"):
                os.makedirs(f"{work}/{directory}", exist_ok=True)
            print("umount_mask", outcome(libc.umount2(f"{home}/.netrc".encode(), 2)))
            print("umount_ssh_mask", outcome(libc.umount2(f"{home}/.ssh/id_ed25519".encode(), 2)))
            bound = libc.mount(home.encode(), f"{work}/mnt".encode(), None, 4096, None)  # MS_BIND, not MS_REC
            print("bind_home", outcome(bound))
            if bound == 0:
                for relative in sys.argv[1:]:
                    try:
                        print("bind_read", open(f"{work}/mnt/{relative}", "rb").read())
                    except OSError:
                        pass
                libc.umount2(f"{work}/mnt".encode(), 2)
            layered = libc.mount(b"overlay", f"{work}/mnt".encode(), b"overlay", 0,
                                 f"lowerdir={home}:{work}/empty".encode())
            print("overlay_home", outcome(layered))
            if layered == 0:
                for relative in sys.argv[1:]:
                    try:
                        print("overlay_read", open(f"{work}/mnt/{relative}", "rb").read())
                    except OSError:
                        pass
        os._exit(0)
    os.waitpid(child, 0)
""")


def lines(stdout):
    return dict(line.split(" ", 1) for line in stdout.splitlines() if " " in line)



def say_known(text):
    """A hole left open, said on stderr: the unittest line on stdout stays "... skipped" for the counters."""
    print(text, file=sys.stderr, flush=True)

class SecretsAttacks(unittest.TestCase):
    def setUp(self):
        os.makedirs(livability.SCRATCH, exist_ok=True)
        self.base = tempfile.mkdtemp(prefix="reach-secrets-attacks-", dir=livability.SCRATCH)
        self.home = os.path.join(self.base, "home")
        self.project = os.path.join(self.home, "proj")
        os.makedirs(self.project)
        self.markers = {}
        for name, relative in CREDENTIALS.items():
            self.plant(relative, name)
        self.write(".ssh/id_ed25519.pub", "ssh-ed25519 AAAA public\n")
        self.environment = dict(os.environ, HOME=self.home, XDG_CONFIG_HOME=os.path.join(self.base, "no-config"))
        self.environment.pop("DSH_SANDBOX_CONFIG", None)
        for variable in SECRET_VARIABLES:
            marker = f"SECRETENV-{variable}-{uuid.uuid4().hex}"
            self.markers[variable] = marker
            self.environment[variable] = marker

    def tearDown(self):
        shutil.rmtree(self.base, ignore_errors=True)

    def write(self, relative, text):
        path = os.path.join(self.home, relative)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
        return path

    def plant(self, relative, name):
        marker = f"SECRET-{name}-{uuid.uuid4().hex}"
        self.markers[name] = marker
        os.chmod(self.write(relative, marker + "\n"), 0o600)

    def backends(self):
        found = []
        if livability.bwrap_works():
            found.append("bwrap")
        if livability.landlock_abi() >= 2:
            found.append("landlock")
        if not found:
            self.skipTest("neither bwrap nor a Landlock kernel (ABI >= 2) on this host")
        return found

    def run_confined(self, backend, mode, argv, root=None, extra=(), environment=None, **options):
        root = root or self.project
        command = [BIN, "run", "--backend", backend, "--mode", mode, "--root", root, *extra, "--", *argv]
        return subprocess.run(command, capture_output=True, text=True, timeout=PATIENCE, check=False,
                              env=environment or self.environment, cwd=root, **options)

    def assert_no_marker(self, text, context):
        for name, marker in self.markers.items():
            self.assertNotIn(marker, text, f"{context}: the {name} secret reached the command")

    def config(self, body):
        path = os.path.join(self.base, "config.json")
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(body)
        return path

    # -------------------------------------------------------------------------- other names --

    def test_other_names_and_other_processes_show_no_secret(self):
        relatives = [CREDENTIALS[name] for name in ("key", "aws", "netrc", "gh", "npm")]
        for backend in self.backends():
            for mode in MODES:
                with self.subTest(backend=backend, mode=mode):
                    done = self.run_confined(backend, mode, ["python3", "-c", OTHER_NAMES, *relatives])
                    self.assertEqual(done.returncode, 0, done.stderr)
                    seen = lines(done.stdout)
                    # The probe really ran each way: a missing line would make "no marker" vacuous.
                    self.assertIn("plain0", seen, done.stdout)
                    self.assertIn("sendfile4", seen, done.stdout)
                    self.assertIn("own_environment", seen, done.stdout)
                    self.assert_no_marker(done.stdout + done.stderr, f"{backend} {mode}")
                    # open_by_handle_at needs CAP_DAC_READ_SEARCH, which the command does not hold.
                    self.assertIn(seen.get("open_by_handle_at"), ("EPERM", "no-handle"), done.stdout)

    def test_nested_namespace_cannot_uncover_a_mask(self):
        # No wildcard and nothing absent: bwrap passes no mask to dsh-sandbox-exec's inner layer, so only
        # the mounts and the command's own domain stand between a nested namespace and the host's files.
        configs = {"defaults": None, "no-inner-mask": self.config('{"maskedPaths": [".netrc", ".aws"]}')}
        for backend in self.backends():
            for label, config in configs.items():
                for mode in MODES:
                    with self.subTest(backend=backend, config=label, mode=mode):
                        extra = ["--config", config] if config else []
                        done = self.run_confined(backend, mode, ["python3", "-c", NESTED_NAMESPACE, ".netrc",
                                                                 ".aws/credentials", ".ssh/id_ed25519"],
                                                 extra=extra)
                        self.assertEqual(done.returncode, 0, done.stderr)
                        seen = lines(done.stdout)
                        self.assertIn("unshare", seen, done.stdout)
                        if seen["unshare"] == "ok":
                            for attempt in ("umount_mask", "bind_home", "overlay_home"):
                                self.assertNotEqual(seen.get(attempt), "ok", f"{attempt}: {done.stdout}")
                        self.assert_no_marker(done.stdout + done.stderr, f"{backend} {label} {mode}")

    def test_io_uring_reads_no_mask(self):
        paths = [os.path.join(self.home, CREDENTIALS[name]) for name in ("netrc", "key", "aws")]
        outside = subprocess.run(["python3", "-c", IO_URING, paths[0]], capture_output=True, text=True,
                                 timeout=PATIENCE, check=False)
        if "uring_read" not in outside.stdout:
            self.skipTest(f"io_uring is not usable on this host: {outside.stdout.strip() or outside.stderr.strip()}")
        self.assertIn(self.markers["netrc"], outside.stdout, "the probe reads a file through a ring")
        for backend in self.backends():
            for mode in MODES:
                with self.subTest(backend=backend, mode=mode):
                    done = self.run_confined(backend, mode, ["python3", "-c", IO_URING, *paths])
                    self.assertEqual(done.returncode, 0, done.stderr)
                    self.assertTrue(done.stdout.strip(), done.stderr)
                    self.assert_no_marker(done.stdout + done.stderr, f"io_uring {backend} {mode}")

    def test_a_start_directory_inside_a_masked_directory(self):
        # The caller's cwd is ~/.aws: the command starts where the secret is, and names it relatively.
        start = os.path.join(self.home, ".aws")
        script = "pwd; cat credentials ../.ssh/id_ed25519 /proc/self/cwd/credentials ../.netrc; echo probed"
        for backend in self.backends():
            for mode in MODES:
                with self.subTest(backend=backend, mode=mode):
                    done = subprocess.run([BIN, "run", "--backend", backend, "--mode", mode, "--root", self.project,
                                           "--", "sh", "-c", script], capture_output=True, text=True,
                                          timeout=PATIENCE, check=False, env=self.environment, cwd=start)
                    self.assertIn("probed", done.stdout, done.stderr)
                    self.assert_no_marker(done.stdout + done.stderr, f"{backend} {mode} from ~/.aws")

    def test_an_inherited_descriptor_on_a_credential_is_not_passed(self):
        # A harness that leaks a descriptor on a credential into dsh-sandbox: the command must not inherit it.
        with open(os.path.join(self.home, CREDENTIALS["aws"]), "rb") as credential:
            number = credential.fileno()
            for backend in self.backends():
                with self.subTest(backend=backend):
                    script = f"cat /proc/self/fd/{number}; cat <&{number}; echo probed"
                    done = self.run_confined(backend, "read-only", ["sh", "-c", script], pass_fds=(number,))
                    self.assertIn("probed", done.stdout, done.stderr)
                    self.assert_no_marker(done.stdout + done.stderr, backend)

    # -------------------------------------------------------------- created while it waits --

    def test_a_credential_created_while_the_command_waits_stays_hidden(self):
        for backend in self.backends():
            for mode in MODES:
                with self.subTest(backend=backend, mode=mode):
                    gate = os.path.join(self.base, f"gate-{backend}-{mode}")
                    os.mkfifo(gate)
                    new_key = os.path.join(self.home, ".ssh", f"id_new_{backend}_{mode}".replace("-", "_"))
                    new_aws = os.path.join(self.home, ".aws", f"late-{backend}-{mode}")
                    script = f"read line < {gate}; cat {new_key} {new_aws}; echo probed"
                    process = subprocess.Popen([BIN, "run", "--backend", backend, "--mode", mode, "--root",
                                                self.project, "--", "sh", "-c", script], env=self.environment,
                                               cwd=self.project, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                               text=True)
                    marker = f"SECRET-late-{uuid.uuid4().hex}"
                    self.markers[f"late-{backend}-{mode}"] = marker
                    # The open of the FIFO for writing waits for the command to open it: it is running.
                    with open(gate, "w", encoding="utf-8") as release:
                        for path in (new_key, new_aws):
                            with open(path, "w", encoding="utf-8") as handle:
                                handle.write(marker + "\n")
                        release.write("go\n")
                    stdout, stderr = process.communicate(timeout=PATIENCE)
                    self.assertIn("probed", stdout, stderr)
                    self.assert_no_marker(stdout + stderr, f"{backend} {mode}")

    # ---------------------------------------------------------- rename tricks, two calls --

    def test_renames_in_one_call_uncover_nothing_in_the_next(self):
        moves = "mv ~/.ssh ~/m-ssh; mv ~/.ssh/id_ed25519 ~/m-key; mv ~/.aws ~/m-aws; mv ~/.netrc ~/m-netrc; " \
                "mv ~/.config ~/m-config; mv ~/.config/gh ~/m-gh; ln ~/.netrc ~/l-netrc; ln ~/.npmrc ~/l-npmrc; " \
                "ln -s ~/.aws ~/s-aws; mkdir ~/d && mv ~/.npmrc ~/d/; :"
        reads = "cat ~/m-ssh/id_ed25519 ~/m-key ~/m-aws/credentials ~/m-netrc ~/m-config/gh/hosts.yml " \
                "~/m-gh/hosts.yml ~/l-netrc ~/l-npmrc ~/s-aws/credentials ~/d/.npmrc 2>/dev/null; echo probed"
        for backend in self.backends():
            with self.subTest(backend=backend):
                first = self.run_confined(backend, "workspace-write", ["sh", "-c", moves], root=self.home)
                self.assertEqual(first.returncode, 0, first.stderr)
                # The first call said what it could not hold: partial, naming ~/.ssh.
                self.assertIn("partial", first.stderr)
                self.assertIn(os.path.join(self.home, ".ssh"), first.stderr)
                second = self.run_confined(backend, "workspace-write", ["sh", "-c", reads], root=self.project)
                self.assertIn("probed", second.stdout, second.stderr)
                self.assert_no_marker(second.stdout + second.stderr, backend)
                for name, relative in CREDENTIALS.items():
                    with open(os.path.join(self.home, relative), encoding="utf-8") as handle:
                        self.assertEqual(handle.read(), self.markers[name] + "\n", f"{relative} changed on disk")

    # ------------------------------------------------------------------ the supervisor paths --

    def test_metadata_calls_on_masks_change_nothing_on_disk(self):
        script = textwrap.dedent("""
            import errno, os, sys
            for path in sys.argv[1:]:
                for name, change in (("chmod", lambda: os.chmod(path, 0o644)),
                                     ("utime", lambda: os.utime(path, (1, 1))),
                                     ("setxattr", lambda: os.setxattr(path, "user.planted", b"1")),
                                     ("chown", lambda: os.chown(path, 1, 1))):
                    try:
                        change()
                        print(name, path, "ok")
                    except OSError as failure:
                        print(name, path, errno.errorcode.get(failure.errno))
        """)
        paths = [os.path.join(self.home, CREDENTIALS[name]) for name in ("key", "aws", "netrc")]
        before = {path: (os.stat(path).st_mode, os.stat(path).st_mtime_ns, os.stat(path).st_uid) for path in paths}
        for backend in self.backends():
            for root in (self.project, self.home):
                with self.subTest(backend=backend, root=root):
                    done = self.run_confined(backend, "workspace-write", ["python3", "-c", script, *paths], root=root)
                    self.assertEqual(done.returncode, 0, done.stderr)
                    self.assertEqual(len(done.stdout.splitlines()), 4 * len(paths), done.stdout)
                    self.assertNotIn(" ok", done.stdout)
                    after = {path: (os.stat(path).st_mode, os.stat(path).st_mtime_ns, os.stat(path).st_uid)
                             for path in paths}
                    self.assertEqual(after, before, "a credential's metadata changed on disk")
                    for path in paths:
                        self.assertEqual(os.listxattr(path), [], f"{path} gained an extended attribute")

    def test_an_allowed_socket_inside_a_masked_directory(self):
        # gpg-agent's socket lives in ~/.gnupg, which the defaults mask; the caller allows the socket.
        import socket
        path = os.path.join(self.home, ".gnupg", "S.gpg-agent")
        os.makedirs(os.path.dirname(path), mode=0o700)
        server = socket.socket(socket.AF_UNIX)
        server.bind(path)
        server.listen(4)
        self.addCleanup(server.close)
        script = textwrap.dedent(f"""
            import socket
            client = socket.socket(socket.AF_UNIX)
            try:
                client.connect({path!r})
                print("connected")
            except OSError as failure:
                print("refused", failure.errno)
        """)
        outcomes = {}
        for backend in self.backends():
            done = self.run_confined(backend, "read-only", ["python3", "-c", script],
                                     extra=["--allow-unix-socket", path])
            outcomes[backend] = done.stdout.strip()
            self.assertTrue(outcomes[backend], done.stderr)
        if len(set(outcomes.values())) > 1:
            say_known(f"# KNOWN: an allowed socket inside a masked directory: {outcomes} (bwrap's tmpfs over ~/.gnupg "
                  "hides the socket the caller allowed; Landlock lets connect() through). Fix: bwrap-masks binds "
                  "each allowed socket beneath a masked directory back between --tmpfs and --remount-ro, or the "
                  "call says the socket is unreachable")
            self.skipTest("KNOWN: the backends disagree on an allowed socket inside a masked directory")

    def test_a_proxy_variable_carrying_a_password(self):
        marker = f"SECRET-proxy-{uuid.uuid4().hex}"
        environment = dict(self.environment, HTTPS_PROXY=f"http://user:{marker}@proxy.invalid:3128")
        backend = self.backends()[0]
        done = self.run_confined(backend, "read-only", ["sh", "-c", "env; echo probed"], environment=environment)
        self.assertIn("probed", done.stdout, done.stderr)
        self.assert_no_marker(done.stdout, backend)
        if marker in done.stdout:
            say_known("# KNOWN: HTTPS_PROXY=http://user:PASSWORD@host reaches the command with the network on (no "
                  "deny pattern names proxy variables). Fix: the scrub strips the userinfo of *_PROXY values, or "
                  "docs/secrets.md says proxies keep their credentials")
            self.skipTest("KNOWN: a proxy's password passes in the environment")

    def test_a_confine_argv_spawned_with_a_hostile_environment(self):
        # The caller spawns confine's argv itself, with every secret still set: the launchers scrub.
        for backend in self.backends():
            with self.subTest(backend=backend):
                done = subprocess.run([BIN, "confine", "--backend", backend, "--mode", "read-only", "--root",
                                       self.project, "--", "sh", "-c", "env; cat /proc/self/environ; echo probed"],
                                      capture_output=True, text=True, timeout=PATIENCE, check=False,
                                      env=self.environment, cwd=self.project)
                self.assertEqual(done.returncode, 0, done.stderr)
                import json
                argv = json.loads(done.stdout)["argv"]
                hostile = dict(self.environment, LD_PRELOAD="", DSH_SANDBOX_DEBUG="1")
                spawned = subprocess.run(argv, capture_output=True, text=True, timeout=PATIENCE, check=False,
                                         env=hostile, cwd=self.project)
                self.assertIn("probed", spawned.stdout, spawned.stderr)
                self.assert_no_marker(spawned.stdout + spawned.stderr, f"confine {backend}")

    # ------------------------------------------------------------------- odd mask entries --

    def test_odd_mask_entries_refuse_or_run_and_still_mask(self):
        os.mkfifo(os.path.join(self.home, "fifo"))
        long_name = "a" * 300
        deep = "/".join(["b" * 200] * 25)
        for backend in self.backends():
            for entry in ("fifo", "/proc/self/environ", "/proc/self", long_name, deep, "/etc/hostname"):
                with self.subTest(backend=backend, entry=entry[:30]):
                    done = self.run_confined(backend, "read-only", ["sh", "-c", "echo ran; cat ~/.netrc"],
                                             extra=["--mask", entry])
                    self.assert_no_marker(done.stdout + done.stderr, f"{backend} --mask {entry[:30]}")
                    if "ran" not in done.stdout:
                        # Refused: with a non-zero status and one line saying why, never a run without masks.
                        self.assertNotEqual(done.returncode, 0, done.stderr)
                        self.assertTrue(done.stderr.strip(), "a refusal says why")
            many = [f"many/{index}" for index in range(2000)]
            config = self.config('{"maskedPaths": [' + ", ".join(f'"{entry}"' for entry in many) + ', ".netrc"]}')
            with self.subTest(backend=backend, entry="2000 entries"):
                done = self.run_confined(backend, "read-only", ["sh", "-c", "echo ran; cat ~/.netrc"],
                                         extra=["--config", config])
                self.assert_no_marker(done.stdout + done.stderr, f"{backend} 2000 entries")

    def test_a_mask_under_proc_is_refused_with_its_reason(self):
        for backend in self.backends():
            for entry in ("/proc/self/environ", "/proc/self", "/etc/mtab"):
                if entry == "/etc/mtab" and not os.path.realpath(entry).startswith("/proc/"):
                    continue
                with self.subTest(backend=backend, entry=entry):
                    done = self.run_confined(backend, "read-only", ["echo", "ran"], extra=["--mask", entry])
                    self.assertNotIn("ran", done.stdout)
                    self.assertNotEqual(done.returncode, 0)
                    self.assertIn("under /proc", done.stderr)
                    self.assertEqual(len(done.stderr.strip().splitlines()), 1, done.stderr)

    def test_a_home_reached_through_a_symlink_is_masked_by_both_names(self):
        link = os.path.join(self.base, "home-link")
        os.symlink(self.home, link)
        environment = dict(self.environment, HOME=link)
        script = f"cat {link}/.netrc {link}/.ssh/id_ed25519 {self.home}/.netrc {self.home}/.aws/credentials; " \
                 "echo probed"
        for backend in self.backends():
            for mode in MODES:
                with self.subTest(backend=backend, mode=mode):
                    done = self.run_confined(backend, mode, ["sh", "-c", script], environment=environment)
                    self.assertIn("probed", done.stdout, done.stderr)
                    self.assert_no_marker(done.stdout + done.stderr, f"{backend} {mode}")

    def test_the_names_inside_a_masked_directory(self):
        # ~/.password-store's entries are the sites the user holds passwords for: a name is a small secret.
        self.plant(".password-store/bank.example/login.gpg", "pass")
        listed = {}
        for backend in self.backends():
            done = self.run_confined(backend, "read-only", ["sh", "-c", "ls -a ~/.password-store; echo probed"])
            self.assertIn("probed", done.stdout, done.stderr)
            self.assert_no_marker(done.stdout + done.stderr, backend)
            listed[backend] = "bank.example" in done.stdout
        if any(listed.values()):
            say_known(f"# KNOWN: a masked directory's names are listed under {[b for b, seen in listed.items() if seen]} "
                  "(Landlock: READ_DIR is granted beneath each directory on the way, so a masked directory "
                  "lists; its files never read). Fix: none without losing `ls ~`; docs/secrets.md should say it")
            self.skipTest("KNOWN: Landlock lists the names inside a masked directory")

    def test_a_relative_home(self):
        # HOME="home" from the home's parent: ssh, aws and git read ./home/.ssh..., which the plan never expands.
        parent = os.path.dirname(self.home)
        environment = dict(self.environment, HOME=os.path.basename(self.home))
        backend = self.backends()[0]
        done = subprocess.run([BIN, "run", "--backend", backend, "--mode", "read-only", "--root", parent, "--", "sh",
                               "-c", "cat \"$HOME/.netrc\"; echo probed"], capture_output=True, text=True,
                              timeout=PATIENCE, check=False, env=environment, cwd=parent)
        if self.markers["netrc"] in done.stdout:
            say_known("# KNOWN: a relative HOME is no home to the plan: $HOME/.netrc, taken from the start directory as "
                  "the tools take it, is read. Fix: dsh_shield_user_homes() resolves a relative HOME against the "
                  "call's start directory, or the call refuses a relative HOME")
            self.skipTest("KNOWN: a relative HOME's credentials are not masked")
        self.assertIn("probed", done.stdout, done.stderr)

    def test_a_directory_on_the_way_too_large_to_enumerate(self):
        # Anyone who can write a directory on the way to a mask (here the home's parent) fills it past the
        # enumeration's limit: never "full" with a mask not held, never a secret without "partial".
        for index in range(4200):
            with open(os.path.join(self.base, f"filler-{index}"), "w", encoding="utf-8"):
                pass
        known = []
        for backend in self.backends():
            with self.subTest(backend=backend):
                done = self.run_confined(backend, "read-only", ["sh", "-c", "cat ~/.netrc; echo probed"])
                if self.markers["netrc"] in done.stdout:
                    self.assertIn("partial", done.stderr)
                    self.assertIn(f"the masks beneath {self.base} are not held", done.stderr)
                elif "probed" not in done.stdout:
                    self.assertNotEqual(done.returncode, 0)
                    if "no sandbox backend is usable" in done.stderr:
                        known.append(backend)
        if known:
            say_known(f"# KNOWN: {known}: a directory on the way to an absent mask or a wildcard's directory with more "
                  "than 4096 entries makes dsh-sandbox-exec's inner layer fail (E2BIG), and the call is refused as "
                  "'no sandbox backend is usable' while confine says full. Fix: bwrap-masks counts the entries "
                  "on the way before the spawn and, as Landlock does, reports those masks not held (partial, or "
                  "refused under requireMasks, naming the directory)")
            self.skipTest("KNOWN: bwrap refuses a too-large directory on the way with the wrong reason")

    # ------------------------------------------------------------------------ the default list --

    def test_a_private_key_under_another_case_or_name(self):
        self.plant(".ssh/ID_RSA", "upper-key")
        self.plant(".ssh/github_ed25519", "custom-key")
        self.plant(".ssh/known_hosts", "known-hosts")
        for backend in self.backends():
            done = self.run_confined(backend, "read-only",
                                     ["sh", "-c", "cat ~/.ssh/ID_RSA ~/.ssh/github_ed25519 ~/.ssh/known_hosts"])
            # The default entry masks every name in ~/.ssh but what ssh reads and holds no secret.
            self.assertIn(self.markers["known-hosts"], done.stdout, backend)
            for name in ("upper-key", "custom-key"):
                self.assertNotIn(self.markers[name], done.stdout, f"{backend}: {name}")

    # ------------------------------------------------------------------------- the file guard --

    def fs_read(self, path, mode="workspace-write"):
        return subprocess.run([BIN, "fs", "read", "--mode", mode, "--root", self.project, path],
                              capture_output=True, text=True, timeout=PATIENCE, check=False,
                              env=self.environment, cwd=self.project)

    def test_the_file_guard_refuses_every_route_to_a_mask(self):
        os.symlink(os.path.join(self.home, CREDENTIALS["aws"]), os.path.join(self.project, "sym-aws"))
        os.symlink("../.ssh", os.path.join(self.project, "sym-ssh"))
        os.symlink(os.path.join(self.home, ".config"), os.path.join(self.project, "sym-config"))
        routes = ("sym-aws", "sym-ssh/id_ed25519", "../.ssh/id_ed25519", "sym-config/gh/hosts.yml",
                  os.path.join(self.home, ".netrc"), os.path.join(self.home, ".ssh", "id_later"),
                  f"/proc/self/root{self.home}/.netrc", "/proc/self/cwd/../.npmrc")
        for mode in MODES:
            for route in routes:
                with self.subTest(mode=mode, route=route):
                    done = self.fs_read(route, mode)
                    self.assertNotEqual(done.returncode, 0, done.stdout)
                    self.assert_no_marker(done.stdout + done.stderr, f"fs read {route}")
        # What is no secret stays readable through the guard: the public key, beside the masked one.
        done = self.fs_read(os.path.join(self.home, ".ssh", "id_ed25519.pub"))
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn("ssh-ed25519 AAAA public", done.stdout)

    def test_the_file_guard_changes_no_mask_with_the_home_as_workspace(self):
        operations = (["mv", ".netrc", "proj/x"], ["mv", ".ssh", "proj/s"], ["mv", ".config", "proj/c"],
                      ["rm", ".npmrc"], ["rm", "-r", ".aws"], ["mkdir", ".ssh/id_x"],
                      ["edit", "--old", "SECRET", "--new", "X", ".netrc"], ["write", ".ssh/id_planted"],
                      ["write", ".npmrc"])
        for operation in operations:
            with self.subTest(operation=" ".join(operation)):
                done = subprocess.run([BIN, "fs", *operation, "--mode", "workspace-write", "--root", self.home],
                                      input="planted\n", capture_output=True, text=True, timeout=PATIENCE,
                                      check=False, env=self.environment, cwd=self.home)
                self.assertIn("FS_SANDBOX_DENIED", done.stderr)
        for name, relative in CREDENTIALS.items():
            with open(os.path.join(self.home, relative), encoding="utf-8") as handle:
                self.assertEqual(handle.read(), self.markers[name] + "\n", f"{relative} changed on disk")
        self.assertEqual(sorted(os.listdir(os.path.join(self.home, ".ssh"))), ["id_ed25519", "id_ed25519.pub"])

    def test_the_file_guard_refuses_a_hard_link_to_a_masked_file(self):
        # Links made before the call: one to a masked file, one to a file beneath a masked directory.
        os.link(os.path.join(self.home, CREDENTIALS["netrc"]), os.path.join(self.project, "hard-netrc"))
        os.link(os.path.join(self.home, CREDENTIALS["aws"]), os.path.join(self.project, "hard-aws"))
        self.write("proj/plain-linked", "ordinary\n")
        os.link(os.path.join(self.project, "plain-linked"), os.path.join(self.project, "plain-linked-too"))
        for mode in MODES:
            for name in ("hard-netrc", "hard-aws"):
                with self.subTest(mode=mode, name=name):
                    done = self.fs_read(name, mode)
                    self.assert_no_marker(done.stdout + done.stderr, f"fs read {name} ({mode})")
                    self.assertIn("FS_SANDBOX_DENIED", done.stderr)
            with self.subTest(mode=mode, name="edit of the hard link"):
                done = subprocess.run([BIN, "fs", "edit", "--old", "SECRET", "--new", "X", "--mode", mode, "--root",
                                       self.project, "hard-netrc"], capture_output=True, text=True,
                                      timeout=PATIENCE, check=False, env=self.environment, cwd=self.project)
                self.assertIn("FS_SANDBOX_DENIED", done.stderr)
            with self.subTest(mode=mode, name="an ordinary file with two links"):
                done = self.fs_read("plain-linked-too", mode)
                self.assertEqual((done.returncode, done.stdout), (0, "ordinary\n"), done.stderr)

    def test_a_hard_link_made_before_the_call_under_the_backends(self):
        # docs/secrets.md says it: another name the credential had before the call is not masked.
        os.link(os.path.join(self.home, CREDENTIALS["netrc"]), os.path.join(self.project, "hard-netrc"))
        leaked = []
        for backend in self.backends():
            done = self.run_confined(backend, "read-only", ["cat", "hard-netrc"])
            if self.markers["netrc"] in done.stdout:
                leaked.append(backend)
        if leaked:
            say_known(f"# KNOWN: a hard link to a credential made before the call is read under {', '.join(leaked)} "
                  "(the masks are names; the file guard refuses it by its inode)")
            self.skipTest("KNOWN: a hard link made before the call is another name")

    def test_serve_results_hold_no_secret(self):
        # The same through serve: bash.run's result (stdout, stderr, the facts) and fs.read of a mask.
        os.link(os.path.join(self.home, CREDENTIALS["netrc"]), os.path.join(self.project, "hard-netrc"))
        import json
        requests = [
            ("bash.run", {"mode": "read-only", "root": self.project,
                          "command": "env; cat /proc/self/environ ~/.netrc ~/.aws/credentials hard-netrc; "
                                     "echo probed"}),
            ("fs.read", {"mode": "read-only", "root": self.project, "path": os.path.join(self.home, ".netrc")}),
            ("fs.read", {"mode": "workspace-write", "root": self.project, "path": "hard-netrc"}),
            ("fs.read", {"mode": "read-only", "root": self.project, "path": "../.ssh/id_ed25519"}),
        ]
        server = subprocess.Popen([BIN, "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True, cwd=self.project, env=self.environment)
        answers = []
        try:
            for number, (method, params) in enumerate(requests, start=1):
                server.stdin.write(json.dumps({"jsonrpc": "2.0", "id": number, "method": method,
                                               "params": params}) + "\n")
                server.stdin.flush()
                answers.append(server.stdout.readline())
        finally:
            server.stdin.close()
            server.wait(timeout=PATIENCE)
            server.stdout.close()
            server.stderr.close()
        self.assertIn("probed", answers[0])
        # The hard link is what the bash command reads under both backends (KNOWN above): judge the guard only.
        self.assert_no_marker(answers[0].replace(self.markers["netrc"], ""), "serve bash.run")
        for answer in answers[1:]:
            self.assert_no_marker(answer, "serve fs.read")
            self.assertIn('"error"', answer)

if __name__ == "__main__":
    sys.exit(livability.run_suite(__name__))
