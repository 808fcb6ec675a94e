# SPDX-License-Identifier: MIT
"""Secrets stay put (issue 22): credentials on disk and secrets in the environment never reach a confined command.

Each case builds a throwaway home under $DSH_TEST_SCRATCH (never /tmp: the Landlock grants and bwrap's
private /tmp would hide a wrong answer) holding every default credential, each file with a marker of its
own, and puts secret variables with markers in the environment; XDG directories and the state directory
live outside the home.  The confined command (`dsh-sandbox run`, both backends, both confined modes)
prints everything it can reach: each file, a walk of the home with every file's content, `cat`, `grep -r`
and `find` over it, its environment, /proc/self/environ and every other /proc/PID/environ it may read.
The test searches that output for the markers: none may appear, or the call is refused, or "partial"
names the mask, as configured.  Writes are judged on the host's disk; a public key, known_hosts, the
user's .gitconfig and ordinary files must stay readable (each carries a visible marker that must
appear, so a command that never ran, or read nothing, fails the case).

The passwd entry's home (/root here) is masked too: for it, the command prints only how many bytes it
could read of each default entry (never their content), and each must be 0 or refused.

Output: unittest's verbose form (one line per case), then "N passed, N failed, N skipped".
"""
import errno
import glob
import json
import os
import pwd
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import textwrap
import unittest
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "livability"))
sys.path.insert(0, os.path.join(HERE, "..", "remote"))
import livability  # noqa: E402

BIN = livability.BIN
MODES = ("read-only", "workspace-write")

# Each default credential, planted (relative to the home).  The wildcard entry .ssh/* is exercised by
# id_ed25519, id_rsa, deploy.pem, host.key and a key named as IdentityFile may name one (github_ED25519).
SECRET_FILES = [
    ".ssh/id_ed25519", ".ssh/id_rsa", ".ssh/deploy.pem", ".ssh/host.key", ".ssh/github_ED25519",
    ".aws/credentials", ".aws/config", ".azure/accessTokens.json", ".config/gcloud/credentials.db",
    ".kube/config", ".docker/config.json", ".netrc", ".git-credentials", ".config/gh/hosts.yml",
    ".gnupg/private-keys-v1.d/key.key", ".password-store/site.gpg", ".local/share/keyrings/login.keyring",
    ".npmrc", ".pypirc",
    ".claude/.credentials.json", ".codex/auth.json", ".gemini/oauth_creds.json", ".gemini/google_accounts.json",
    ".local/share/opencode/auth.json", ".config/github-copilot/hosts.json",
]
# What must stay readable beside them: a tool that loses these breaks (gh's config, ssh's known_hosts).
VISIBLE_FILES = [
    ".ssh/id_ed25519.pub", ".ssh/id_rsa.pub", ".ssh/known_hosts", ".ssh/config", ".ssh/authorized_keys",
    ".config/gh/config.yml", ".docker/features.json", ".claude/settings.json", ".codex/config.toml",
    ".gemini/settings.json", ".envrc", ".local/share/other/notes.txt",
]
# The default entries as docs/secrets.md lists them (probe must show each; the passwd home is checked on them).
DEFAULT_ENTRIES = [
    ".ssh/*", ".aws", ".azure", ".config/gcloud", ".kube", ".docker/config.json",
    ".netrc", ".git-credentials", ".config/gh/hosts.yml", ".gnupg", ".password-store", ".local/share/keyrings",
    ".npmrc", ".pypirc", ".claude/.credentials.json", ".codex/auth.json", ".gemini/oauth_creds.json",
    ".gemini/google_accounts.json", ".local/share/opencode/auth.json", ".config/github-copilot",
]
SECRET_ENV = ["AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "GITHUB_TOKEN", "GH_TOKEN", "NPM_TOKEN", "OPENAI_API_KEY",
              "ANTHROPIC_API_KEY", "my_service_token", "DB_PASSWORD", "STRIPE_SECRET_KEY", "HOOK_SECRET"]
VISIBLE_ENV = ["PLAIN_SETTING", "TOKENIZERS_PARALLELISM"]

# Prints everything it can reach.  argv: the trees to walk, then "--", then single files to read.
DUMP = textwrap.dedent(r"""
    import errno, os, subprocess, sys
    split = sys.argv.index("--")
    trees, files = sys.argv[1:split], sys.argv[split + 1:]
    def read(path):
        try:
            with open(path, "rb") as handle:
                return repr(handle.read(65536))
        except OSError as error:
            return errno.errorcode.get(error.errno, str(error.errno))
    for path in files:
        print("file", path, read(path))
    for top in trees:
        for directory, names, leaves in os.walk(top, onerror=lambda e: print("walk", e.filename, e.strerror)):
            for leaf in leaves:
                print("tree", os.path.join(directory, leaf), read(os.path.join(directory, leaf)))
    print("environ", sorted(os.environ.items()))
    print("proc-self-environ", read("/proc/self/environ"))
    for pid in os.listdir("/proc"):
        if pid.isdigit() and int(pid) != os.getpid():
            print("proc", pid, read(f"/proc/{pid}/environ"))
    shell = ('cat "$@" 2>&1; env; '
             'for t in $TREES; do grep -r -a . "$t" 2>&1; find "$t" -type f -exec cat {} + 2>&1; done')
    done = subprocess.run(["bash", "-c", shell, "dump", *files], capture_output=True, text=True,
                          env=dict(os.environ, TREES=" ".join(trees)), errors="replace")
    print("shell", done.stdout, done.stderr)
    print("DUMP-COMPLETE")
""")

# How many bytes of each path it could read (never the content): for the passwd entry's home.
SIZES = textwrap.dedent(r"""
    import errno, glob, os, sys
    def size(path):
        try:
            with open(path, "rb") as handle:
                return str(len(handle.read()))
        except OSError as error:
            return errno.errorcode.get(error.errno, str(error.errno))
    for pattern in sys.argv[1:]:
        for path in glob.glob(pattern) or [pattern]:
            if path.endswith(".pub"):
                continue
            if os.path.isdir(path):
                for directory, _, leaves in os.walk(path, onerror=lambda e: print("size", e.filename, "EACCES")):
                    for leaf in leaves:
                        print("size", os.path.join(directory, leaf), size(os.path.join(directory, leaf)))
            else:
                print("size", path, size(path))
    print("SIZES-COMPLETE")
""")

# Every write a hostile command tries on a mask; one line per attempt, "ok" or the errno name.
WRITES = textwrap.dedent(r"""
    import errno, os, sys
    def attempt(what, action):
        try:
            action()
            print("write", what, "ok")
        except OSError as error:
            print("write", what, errno.errorcode.get(error.errno, str(error.errno)))
    def put(path, flags):
        def action():
            fd = os.open(path, flags, 0o600)
            try:
                os.write(fd, b"hostile\n")
            finally:
                os.close(fd)
        return action
    for path in sys.argv[1:]:
        if os.path.isdir(path):
            attempt(path + " create", put(os.path.join(path, "planted"), os.O_WRONLY | os.O_CREAT))
            attempt(path + " mkdir", lambda: os.mkdir(os.path.join(path, "sub")))
            attempt(path + " rmdir", lambda: os.rmdir(path))
        else:
            attempt(path + " overwrite", put(path, os.O_WRONLY | os.O_TRUNC))
            attempt(path + " append", put(path, os.O_WRONLY | os.O_APPEND))
            attempt(path + " create", put(path, os.O_WRONLY | os.O_CREAT))
            attempt(path + " unlink", lambda: os.unlink(path))
            attempt(path + " rename", lambda: os.rename(path, path + ".moved"))
            attempt(path + " truncate", lambda: os.truncate(path, 0))
    print("WRITES-COMPLETE")
""")


def backends():
    found = []
    if livability.landlock_abi() > 0:
        found.append("landlock")
    if livability.bwrap_works():
        found.append("bwrap")
    return found


def write_file(path, text, mode=0o600):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.chmod(path, mode)


def read_file(path):
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def partial_reasons(stderr):
    """The reasons `run` gives for partial enforcement ("notice: partial enforcement under B: REASON")."""
    found = []
    for line in stderr.splitlines():
        marker = line.find("partial enforcement under ")
        if marker >= 0:
            found.append(line[marker:].split(": ", 1)[-1])
    return found


def named_by(reasons, path):
    """Whether one of `reasons` names `path`, a directory holding it, or a wildcard entry matching it."""
    for reason in reasons:
        # Only the mask a reason is about counts ("the mask PATH lies inside the writable root ROOT", "the masks
        # beneath DIR are not held"): the root it names holds every path and would excuse any leak.
        for token in re.findall(r"\bmasks? (?:beneath |of )?\"?(/[^\s\"',:;]+)", reason):
            token = token.rstrip(".")
            if path == token or path.startswith(token.rstrip("/") + "/"):
                return True
            if any(c in token for c in "*?[") and glob.fnmatch.fnmatch(path, token):
                return True
    return False


def may_be_unheld(backend, mode, reasons, path):
    """Whether an existing mask may go unheld, said: only under Landlock's workspace-write, where the write
    grant of a root includes reading (bwrap mounts every existing mask read-only, wherever it lies; under
    read-only nothing is writable)."""
    return backend == "landlock" and mode == "workspace-write" and named_by(reasons, path)


class World:
    """A throwaway home full of credentials, a workspace, a place outside both, and the environment."""

    def __init__(self, home_is_workspace=False):
        os.makedirs(livability.SCRATCH, exist_ok=True)
        self.base = os.path.realpath(tempfile.mkdtemp(prefix="reach-secrets-", dir=livability.SCRATCH))
        os.chmod(self.base, 0o755)
        self.home = os.path.join(self.base, "home")
        self.workspace = self.home if home_is_workspace else os.path.join(self.base, "workspace")
        self.elsewhere = os.path.join(self.base, "elsewhere")
        for directory in (self.home, self.workspace, self.elsewhere):
            os.makedirs(directory, exist_ok=True)
        self.secrets = {}   # absolute path -> marker
        self.visible = {}   # absolute path -> marker
        tag = uuid.uuid4().hex[:10]
        for name in SECRET_FILES:
            self.plant_secret(os.path.join(self.home, name), f"SECRETMARK-{name.strip('.').replace('/', '_')}-{tag}")
        for name in VISIBLE_FILES:
            self.plant_visible(os.path.join(self.home, name), f"VISIBLEMARK-{name.strip('.').replace('/', '_')}-{tag}")
        self.identity = ("Visible Tester", f"tester-{tag}@example.com")
        gitconfig = (f"[user]\n\tname = {self.identity[0]}\n\temail = {self.identity[1]}\n"
                     f"[credential]\n\thelper = store\n# VISIBLEMARK-gitconfig-{tag}\n")
        write_file(os.path.join(self.home, ".gitconfig"), gitconfig, 0o644)
        self.visible[os.path.join(self.home, ".gitconfig")] = f"VISIBLEMARK-gitconfig-{tag}"
        # The project's own .npmrc holds registry settings and stays readable.
        self.plant_visible(os.path.join(self.workspace, "project", ".npmrc"), f"VISIBLEMARK-project-npmrc-{tag}")
        self.secret_env = {name: f"SECRETMARK-env-{name}-{tag}" for name in SECRET_ENV}
        self.visible_env = {name: f"VISIBLEMARK-env-{name}-{tag}" for name in VISIBLE_ENV}
        xdg = os.path.join(self.base, "xdg")
        self.env = {key: value for key, value in os.environ.items()
                    if key not in ("DSH_SANDBOX_CONFIG", "SSH_AUTH_SOCK")}
        self.env.update(HOME=self.home, XDG_CONFIG_HOME=os.path.join(xdg, "config"),
                        XDG_STATE_HOME=os.path.join(xdg, "state"), XDG_CACHE_HOME=os.path.join(xdg, "cache"),
                        DSH_SANDBOX_STATE_DIR=os.path.join(xdg, "dsh-state"),
                        GOOGLE_APPLICATION_CREDENTIALS=os.path.join(self.elsewhere, "adc.json"))
        self.env.update(self.secret_env)
        self.env.update(self.visible_env)

    def plant_secret(self, path, marker):
        """Each in its own file's shape, so a tool reading it (npm, git, pip) takes it as it would a real one."""
        shapes = {".npmrc": f"//registry.npmjs.org/:_authToken={marker}\n",
                  ".pypirc": f"[pypi]\nusername = __token__\npassword = {marker}\n",
                  ".git-credentials": f"https://tester:{marker}@example.com\n",
                  ".netrc": f"machine example.com login tester password {marker}\n",
                  "credentials": f"[default]\naws_access_key_id = AKIA\naws_secret_access_key = {marker}\n"}
        text = shapes.get(os.path.basename(path), f"-----BEGIN SECRET-----\n{marker}\n-----END SECRET-----\n")
        write_file(path, text)
        self.secrets[path] = marker

    def plant_visible(self, path, marker):
        write_file(path, f"{marker}\n", 0o644)
        self.visible[path] = marker

    def cleanup(self):
        shutil.rmtree(self.base, ignore_errors=True)

    def config(self, **values):
        path = os.path.join(self.base, f"config-{uuid.uuid4().hex[:6]}.json")
        write_file(path, json.dumps(values), 0o644)
        return path

    def dsh(self, *args, env=None, stdin=None, cwd=None):
        return subprocess.run([BIN, *args], capture_output=True, text=True, check=False, timeout=300, input=stdin,
                              env=self.env if env is None else env, cwd=cwd or self.workspace, errors="replace")

    def policy(self, backend, mode, extra=(), config=None):
        return [*(["--config", config] if config else []), "--backend", backend, "--mode", mode,
                "--root", self.workspace, *extra]

    def run(self, backend, mode, *command, extra=(), config=None, env=None):
        return self.dsh("run", *self.policy(backend, mode, extra, config), "--", *command, env=env)

    def dump(self, backend, mode, extra=(), config=None, env=None, trees=None, files=None):
        trees = trees if trees is not None else [self.home, self.workspace, self.elsewhere]
        files = files if files is not None else [*self.secrets, *self.visible]
        return self.run(backend, mode, "python3", "-c", DUMP, *trees, "--", *files, extra=extra, config=config,
                        env=env)

    def leaked(self, text, secrets=None):
        """The secret files and variables whose markers appear in `text`."""
        secrets = self.secrets if secrets is None else secrets
        return ([path for path, marker in secrets.items() if marker in text]
                + [name for name, marker in self.secret_env.items() if marker in text])

    def missing(self, text):
        """The visible files and variables whose markers do not appear in `text`."""
        return ([path for path, marker in self.visible.items() if marker not in text]
                + [name for name, marker in self.visible_env.items() if marker not in text])


class SecretsCase(unittest.TestCase):
    """Each case builds its world; `each` runs the body on every backend the host has, in both modes."""
    home_is_workspace = False

    def setUp(self):
        self.backends = backends()
        if not self.backends:
            self.skipTest("neither bwrap nor Landlock works on this host")
        self.world = World(self.home_is_workspace)
        self.addCleanup(self.world.cleanup)

    def each(self, body, modes=MODES, fresh=False):
        """`fresh`: a new world for each run (the body changes the home, as an unheld mask lets it)."""
        for backend in self.backends:
            for mode in modes:
                if fresh:
                    self.world = World(self.home_is_workspace)
                    self.addCleanup(self.world.cleanup)
                with self.subTest(backend=backend, mode=mode):
                    body(backend, mode)

    def assert_dumped(self, outcome, what):
        self.assertEqual(outcome.returncode, 0, f"{what}: the command did not run: {outcome.stderr[-2000:]}")
        self.assertIn("DUMP-COMPLETE", outcome.stdout, f"{what}: {outcome.stderr[-2000:]}")

    def assert_nothing_secret(self, outcome, what, secrets=None):
        """No marker, and no partial reason about a mask (everything here is held)."""
        self.assert_dumped(outcome, what)
        leaked = self.world.leaked(outcome.stdout + outcome.stderr, secrets)
        self.assertEqual(leaked, [], f"{what}: the command read these secrets")
        masks = [reason for reason in partial_reasons(outcome.stderr) if "mask" in reason]
        self.assertEqual(masks, [], f"{what}: a mask was not held")

    def assert_held_or_named(self, outcome, what):
        """Every secret whose marker appears is named by a partial reason (as configured: requireMasks false)."""
        self.assert_dumped(outcome, what)
        reasons = partial_reasons(outcome.stderr)
        text = outcome.stdout + outcome.stderr
        unnamed = [path for path, marker in self.world.secrets.items()
                   if marker in text and not named_by(reasons, path)]
        self.assertEqual(unnamed, [], f"{what}: read, and no partial reason names the mask: {reasons}")
        self.assertEqual([name for name, marker in self.world.secret_env.items() if marker in text], [],
                         f"{what}: a secret variable passed")
        return reasons


class Planted(SecretsCase):
    """The home apart from the workspace: every mask is held, on both backends, in both modes."""

    def test_no_planted_credential_or_secret_variable_reaches_the_command(self):
        def body(backend, mode):
            outcome = self.world.dump(backend, mode)
            self.assert_nothing_secret(outcome, f"{backend} {mode}")
            self.assertEqual(self.world.missing(outcome.stdout), [], "these should have stayed readable")
            # A path-valued variable is no secret: it passes.
            self.assertIn(f"GOOGLE_APPLICATION_CREDENTIALS', '{self.world.elsewhere}", outcome.stdout)
        self.each(body)

    def test_the_passwd_entrys_home_is_masked_too(self):
        passwd_home = pwd.getpwuid(os.getuid()).pw_dir
        if os.path.realpath(passwd_home) == self.world.home or not os.path.isdir(passwd_home):
            self.skipTest(f"the passwd entry's home {passwd_home!r} is no second home here")
        patterns = [os.path.join(passwd_home, entry) for entry in DEFAULT_ENTRIES]
        present = [path for pattern in patterns for path in glob.glob(pattern) if not path.endswith(".pub")]

        def body(backend, mode):
            outcome = self.world.run(backend, mode, "python3", "-c", SIZES, *patterns)
            self.assertIn("SIZES-COMPLETE", outcome.stdout, outcome.stderr)
            readable = [line for line in outcome.stdout.splitlines()
                        if line.startswith("size ") and line.split()[-1].isdigit() and line.split()[-1] != "0"]
            self.assertEqual(readable, [], f"{backend} {mode}: bytes of the passwd home's credentials were readable")
            for path in present:  # each one that exists was looked at
                self.assertIn(f"size {path}", outcome.stdout)
        self.each(body)

    def test_a_symlinked_credential_directory_masks_its_target(self):
        target = os.path.join(self.world.elsewhere, "aws-store")
        aws = os.path.join(self.world.home, ".aws")
        shutil.move(aws, target)
        os.symlink(target, aws)
        for path in list(self.world.secrets):
            if path.startswith(aws + "/"):
                self.world.secrets[target + path[len(aws):]] = self.world.secrets.pop(path)

        def body(backend, mode):
            files = [os.path.join(target, "credentials"), os.path.join(aws, "credentials")]
            outcome = self.world.dump(backend, mode, files=files)
            self.assert_nothing_secret(outcome, f"{backend} {mode}")
        self.each(body)

    def test_a_credential_created_after_the_start_stays_hidden(self):
        world = self.world
        late = {os.path.join(world.home, ".aws", "credentials"): "aws",        # its directory absent at start
                os.path.join(world.home, ".netrc"): "netrc",                   # absent at start
                os.path.join(world.home, ".ssh", "id_new"): "ssh",             # a wildcard's new match
                os.path.join(world.home, ".config", "gh", "hosts.yml"): "gh"}  # absent, its directory there
        shutil.rmtree(os.path.join(world.home, ".aws"))
        for path in (os.path.join(world.home, ".netrc"), os.path.join(world.home, ".config", "gh", "hosts.yml")):
            os.unlink(path)
            del world.secrets[path]
        for path in list(world.secrets):
            if path.startswith(os.path.join(world.home, ".aws") + "/"):
                del world.secrets[path]
        fifo = os.path.join(world.workspace, "go")
        os.mkfifo(fifo)
        waiting = "import sys\nopen(sys.argv[1]).read()\nprogram = sys.argv[2]\nsys.argv[1:3] = []\nexec(program)\n"

        def body(backend, mode):
            for path in late:
                if os.path.lexists(path):
                    os.unlink(path)
            shutil.rmtree(os.path.join(world.home, ".aws"), ignore_errors=True)
            visible_late = os.path.join(world.workspace, f"late-{backend}-{mode}.txt")
            argv = [BIN, "run", *world.policy(backend, mode), "--", "python3", "-c", waiting, fifo, DUMP,
                    world.home, "--", *late, visible_late]
            command = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                       env=world.env, cwd=world.workspace)
            try:
                writer = self.open_when_read(fifo, command)
                markers = {}
                for path, name in late.items():
                    markers[path] = f"SECRETMARK-late-{name}-{uuid.uuid4().hex[:8]}"
                    write_file(path, markers[path] + "\n")
                write_file(visible_late, "VISIBLEMARK-late\n", 0o644)
                os.close(writer)
                stdout, stderr = command.communicate(timeout=300)
            finally:
                if command.poll() is None:
                    command.kill()
                    command.wait()
            outcome = subprocess.CompletedProcess(argv, command.returncode, stdout, stderr)
            self.assert_dumped(outcome, f"{backend} {mode}")
            self.assertIn("VISIBLEMARK-late", stdout, "the command did not see an ordinary file made after its start")
            leaked = [path for path, marker in markers.items() if marker in stdout + stderr]
            self.assertEqual(leaked, [], f"{backend} {mode}: credentials created during the call were read")
            self.assertEqual(world.leaked(stdout + stderr), [], f"{backend} {mode}: planted secrets were read")
        self.each(body)

    def open_when_read(self, fifo, command):
        """Opens the FIFO for writing once the command opened it for reading (readiness, not timing)."""
        while True:
            try:
                return os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            except OSError as error:
                if error.errno != errno.ENXIO:
                    raise
            if command.poll() is not None:
                self.fail(f"the command ended before it waited: {command.stderr.read()[-2000:]}")
            os.sched_yield()


class HomeIsTheWorkspace(SecretsCase):
    """The workspace is the home: under workspace-write a mask lies inside the writable root."""
    home_is_workspace = True

    def snapshot(self):
        """Every file under the home on the host: content and link count (a hard link shows as 2)."""
        found = {}
        for directory, _, leaves in os.walk(self.world.home):
            for leaf in leaves:
                path = os.path.join(directory, leaf)
                info = os.lstat(path)
                if stat.S_ISREG(info.st_mode):
                    with open(path, "rb") as handle:
                        found[path] = (handle.read(), info.st_nlink)
        return found

    def test_the_command_reads_no_secret_or_partial_names_the_mask(self):
        def body(backend, mode):
            outcome = self.world.dump(backend, mode)
            reasons = self.assert_held_or_named(outcome, f"{backend} {mode}")
            self.assertEqual(self.world.missing(outcome.stdout), [], "these should have stayed readable")
            if mode == "read-only":  # nothing is writable: every mask is held
                self.assert_nothing_secret(outcome, f"{backend} {mode}")
            if backend == "bwrap":   # an existing mask is a read-only mount wherever it lies
                self.assertEqual(self.world.leaked(outcome.stdout + outcome.stderr), [], reasons)
        self.each(body)

    def test_writes_to_masks_fail_and_nothing_changes_on_disk(self):
        def body(backend, mode):
            world = self.world
            targets = [path for path in world.secrets if not path.startswith(os.path.join(world.home, ".aws/"))]
            targets += [os.path.join(world.home, ".aws"), os.path.join(world.home, ".gnupg")]
            before = self.snapshot()
            outcome = world.run(backend, mode, "python3", "-c", WRITES, *targets)
            self.assertIn("WRITES-COMPLETE", outcome.stdout, outcome.stderr)
            reasons = partial_reasons(outcome.stderr)
            after = self.snapshot()
            for target in targets:
                if may_be_unheld(backend, mode, reasons, target):
                    continue  # not held, and said so (Landlock: the write grant includes reading)
                took = [line for line in outcome.stdout.splitlines()
                        if line.startswith(f"write {target} ") and line.endswith(" ok")]
                self.assertEqual(took, [], f"{backend} {mode}: a write to a mask seemed to succeed")
                def beneath(tree):
                    return {path: value for path, value in tree.items()
                            if path == target or path.startswith(target + "/")}
                self.assertEqual(beneath(after), beneath(before), f"{backend} {mode}: the host's {target} changed")
                self.assertFalse(os.path.lexists(target + ".moved"), f"{backend} {mode}: {target} was renamed")
        self.each(body, fresh=True)

    def test_rename_and_link_tricks_uncover_nothing_now_or_in_a_later_call(self):
        tricks = textwrap.dedent("""
            cd "$HOME"
            mv .ssh moved-ssh; mv .ssh/id_ed25519 moved-key; ln .ssh/id_ed25519 linked-key
            ln -s .ssh/id_ed25519 symlinked-key; cp .ssh/id_ed25519 copied-key
            mv .aws moved-aws; mv .aws/credentials moved-aws-credentials; ln .aws/credentials linked-aws
            mv .netrc moved-netrc; ln .netrc linked-netrc; rm -f .netrc; mkdir -p holder && mv .gnupg holder/
            mv .config moved-config; ln .config/gh/hosts.yml linked-gh
            python3 -c 'import os; os.link(".ssh/id_rsa", "pylinked", follow_symlinks=False)'
            true
        """)

        def body(backend, mode):
            world = self.world
            first = world.run(backend, mode, "bash", "-c", tricks + "python3 -c \"$1\" \"$HOME\" --", "tricks", DUMP)
            self.assert_dumped(first, f"{backend} {mode} (the tricks)")
            reasons = partial_reasons(first.stderr)
            held = {path: marker for path, marker in world.secrets.items()
                    if not may_be_unheld(backend, mode, reasons, path)}
            self.assertEqual(world.leaked(first.stdout + first.stderr, held), [],
                             f"{backend} {mode}: the tricks uncovered a mask")
            second = world.dump(backend, mode, trees=[world.home])
            self.assert_dumped(second, f"{backend} {mode} (the later call)")
            self.assertEqual(world.leaked(second.stdout + second.stderr, held), [],
                             f"{backend} {mode}: a later call found a masked key under another name")
            # On the host: each held credential is where it was, whole, with no second name.
            for path, marker in held.items():
                self.assertTrue(os.path.isfile(path), f"{backend} {mode}: {path} was moved away")
                self.assertIn(marker, read_file(path))
                self.assertEqual(os.stat(path).st_nlink, 1, f"{backend} {mode}: {path} was linked")
        self.each(body, fresh=True)

    def test_a_symlink_to_a_credential_repointed_by_one_call_uncovers_nothing_in_the_next(self):
        # ~/.aws is a link to a store outside every root; the link itself lies in the writable root (the home),
        # where the command can repoint it, and the next call plans the new target: the store is then readable
        # under its own name.  So the call that could repoint it must say so (partial, naming the mask), and
        # with requireMasks it is refused, the link left as it was, and the store never read.
        repoint = 'mkdir -p "$HOME/empty" && ln -sfn "$HOME/empty" "$HOME/.aws"; echo called'

        def body(backend, mode):
            world = self.world
            store = os.path.join(world.elsewhere, "aws-store")
            aws = os.path.join(world.home, ".aws")
            shutil.move(aws, store)
            os.symlink(store, aws)
            credentials = os.path.join(store, "credentials")
            marker = world.secrets.pop(os.path.join(aws, "credentials"))
            strict = world.config(requireMasks=True)
            refused = world.run(backend, mode, "bash", "-c", repoint, config=strict)
            self.assertEqual(os.readlink(aws), store, f"{backend} {mode}: repointed although masks are required")
            later = world.run(backend, mode, "cat", credentials, config=strict)
            self.assertNotIn(marker, later.stdout, f"{backend} {mode}: read although masks are required")
            first = world.run(backend, mode, "bash", "-c", repoint)
            self.assertIn("called", first.stdout, first.stderr)
            said = named_by(partial_reasons(first.stderr), os.path.join(aws, "credentials"))
            if mode == "workspace-write":
                self.assertTrue(said, f"{backend}: the call that can repoint the link does not say so: {first.stderr}")
                self.assertNotEqual(refused.returncode, 0, "requireMasks did not refuse it")
            later = world.dump(backend, mode, files=[credentials], trees=[store])
            self.assert_dumped(later, f"{backend} {mode}")
            self.assertTrue(marker not in later.stdout or said,
                            f"{backend} {mode}: the store behind a repointed link was read, and no call said so")
        self.each(body, fresh=True)

    def test_landlock_says_partial_for_masks_in_the_writable_root_or_refuses(self):
        if "landlock" not in self.backends:
            self.skipTest("Landlock is not enforced on this host")
        world = self.world
        present = list(world.secrets)
        outcome = world.dump("landlock", "workspace-write")
        self.assert_dumped(outcome, "landlock workspace-write")
        reasons = partial_reasons(outcome.stderr)
        self.assertEqual([path for path in present if not named_by(reasons, path)], [],
                         f"masks inside the writable root not named partial: {reasons}")
        self.assertTrue(any("lies inside the writable root" in reason for reason in reasons), reasons)
        facts = json.loads(world.dsh("confine", *world.policy("landlock", "workspace-write"), "--", "true").stdout)
        self.assertEqual(facts["enforcement"], "partial", facts)
        self.assertNotIn(os.path.join(world.home, ".aws"), facts.get("masked", []), "a mask not held is no fact")
        # requireMasks: the call is refused, and the command never ran.
        config = world.config(requireMasks=True)
        canary = os.path.join(world.home, "ran")
        refused = world.run("landlock", "workspace-write", "touch", canary, config=config)
        self.assertEqual(refused.returncode, 125, refused.stderr)
        self.assertIn("lies inside the writable root", refused.stderr)
        self.assertFalse(os.path.lexists(canary), "the command ran although the masks are required")

    def test_an_absent_mask_in_the_writable_root_is_partial_under_bwrap_or_refused(self):
        if "bwrap" not in self.backends:
            self.skipTest("bwrap cannot make a sandbox on this host")
        world = self.world
        netrc = os.path.join(world.home, ".netrc")
        os.unlink(netrc)
        del world.secrets[netrc]
        script = f"echo SECRETMARK-created > {netrc}; cat {netrc}"
        outcome = world.run("bwrap", "workspace-write", "bash", "-c", script)
        reasons = partial_reasons(outcome.stderr)
        self.assertTrue(named_by(reasons, netrc), f"an absent mask inside the root is not said: {reasons}")
        if os.path.lexists(netrc):
            os.unlink(netrc)
        config = world.config(requireMasks=True)
        refused = world.run("bwrap", "workspace-write", "bash", "-c", script, config=config)
        self.assertEqual(refused.returncode, 125, refused.stderr)
        self.assertFalse(os.path.lexists(netrc), "the command ran although the masks are required")
        self.assertNotIn("SECRETMARK-created", refused.stdout)

    def test_a_mask_beneath_tmp_is_partial_under_landlock_workspace_write(self):
        if "landlock" not in self.backends:
            self.skipTest("Landlock is not enforced on this host")
        world = self.world
        place = tempfile.mkdtemp(prefix="dsh-secrets-", dir="/tmp")
        self.addCleanup(shutil.rmtree, place, True)
        secret = os.path.join(place, "token")
        write_file(secret, "SECRETMARK-tmp\n")
        outcome = world.run("landlock", "workspace-write", "sh", "-c", f"cat {secret}; echo ran",
                            extra=("--mask", secret))
        self.assertIn("ran", outcome.stdout, outcome.stderr)
        reasons = partial_reasons(outcome.stderr)
        if "SECRETMARK-tmp" in outcome.stdout:
            self.assertTrue(named_by(reasons, secret) and any("/tmp" in reason for reason in reasons), reasons)
        held = world.run("landlock", "read-only", "sh", "-c", f"cat {secret}; echo ran", extra=("--mask", secret))
        self.assertIn("ran", held.stdout, held.stderr)
        self.assertNotIn("SECRETMARK-tmp", held.stdout, "under read-only /tmp is no writable root: held")


class Settings(SecretsCase):
    """--mask, --allow-env and the config's maskedPaths, requireMasks and environment."""

    def test_mask_adds_a_path_absolute_or_under_the_home(self):
        world = self.world
        notes = os.path.join(world.home, "notes", "secret.txt")
        other = os.path.join(world.home, "notes", "other.txt")
        world.plant_visible(notes, "VISIBLEMARK-notes-before")
        write_file(other, "SECRETMARK-other\n")

        def body(backend, mode):
            plain = world.run(backend, mode, "cat", notes, other)
            self.assertIn("VISIBLEMARK-notes-before", plain.stdout, plain.stderr)  # the control: readable unmasked
            self.assertIn("SECRETMARK-other", plain.stdout, plain.stderr)
            masked = world.run(backend, mode, "sh", "-c", f"cat {notes} {other}; echo done",
                               extra=("--mask", notes, "--mask", "notes/other.txt"))
            self.assertIn("done", masked.stdout, masked.stderr)
            self.assertNotIn("VISIBLEMARK-notes-before", masked.stdout)
            self.assertNotIn("SECRETMARK-other", masked.stdout)
        del world.visible[notes]
        self.each(body)

    def test_a_bad_mask_or_allowed_name_is_a_one_line_usage_error(self):
        for option, value in (("--mask", "a/../b"), ("--mask", ""), ("--mask", "/"), ("--mask", "*/x"),
                              ("--allow-env", "BAD*"), ("--allow-env", "BAD-NAME")):
            with self.subTest(option=option, value=value):
                outcome = self.world.dsh("run", option, value, "--", "true")
                self.assertEqual(outcome.returncode, 2, outcome.stderr)
                self.assertEqual(len(outcome.stderr.strip().splitlines()), 1, outcome.stderr)
                self.assertIn(f'{option} "{value}"' if value else option, outcome.stderr)

    def test_allow_env_lets_one_name_through(self):
        def body(backend, mode):
            outcome = self.world.dump(backend, mode, extra=("--allow-env", "GITHUB_TOKEN"), files=[])
            self.assert_dumped(outcome, f"{backend} {mode}")
            text = outcome.stdout + outcome.stderr
            self.assertIn(self.world.secret_env["GITHUB_TOKEN"], text, "the allowed variable did not pass")
            self.assertEqual([name for name in self.world.leaked(text) if name in SECRET_ENV], ["GITHUB_TOKEN"])
        self.each(body)

    def test_config_masked_paths_empty_turns_the_masks_off(self):
        config = self.world.config(maskedPaths=[], environment={"deny": []})

        def body(backend, mode):
            outcome = self.world.dump(backend, mode, config=config)
            self.assert_dumped(outcome, f"{backend} {mode}")
            leaked = set(self.world.leaked(outcome.stdout))
            self.assertEqual(set(self.world.secrets) | set(SECRET_ENV), leaked, "the control: all is readable")
        self.each(body)

    def test_config_masked_paths_and_environment_replace_the_defaults(self):
        world = self.world
        custom = os.path.join(world.home, "vault", "key")
        write_file(custom, "SECRETMARK-custom\n")
        env = dict(world.env, MY_CUSTOM_THING="SECRETMARK-custom-env")
        config = world.config(maskedPaths=["vault"], environment={"deny": ["MY_CUSTOM_*"], "allow": ["OTHER"]})

        def body(backend, mode):
            outcome = world.dump(backend, mode, config=config, env=env, files=[custom])
            self.assert_dumped(outcome, f"{backend} {mode}")
            self.assertNotIn("SECRETMARK-custom", outcome.stdout)
            self.assertIn(world.secrets[os.path.join(world.home, ".netrc")], outcome.stdout,
                          "maskedPaths replaces the defaults")
            self.assertIn(world.secret_env["GITHUB_TOKEN"], outcome.stdout, "environment.deny replaces the defaults")
        self.each(body)

    def test_config_environment_allow_lets_a_default_denied_name_through(self):
        config = self.world.config(environment={"allow": ["OPENAI_API_KEY"]})

        def body(backend, mode):
            outcome = self.world.dump(backend, mode, config=config, files=[])
            self.assert_dumped(outcome, f"{backend} {mode}")
            leaked = [name for name in self.world.leaked(outcome.stdout) if name in SECRET_ENV]
            self.assertEqual(leaked, ["OPENAI_API_KEY"])
        self.each(body)

    def test_config_refuses_bad_entries_naming_the_key(self):
        for values, key in (({"maskedPaths": ["a/../b"]}, "maskedPaths"), ({"maskedPaths": "x"}, "maskedPaths"),
                            ({"requireMasks": "yes"}, "requireMasks"),
                            ({"environment": {"deny": ["BAD-NAME"]}}, "environment"),
                            ({"environment": {"allow": ["X*"]}}, "environment"),
                            ({"environment": {"pass": []}}, "environment")):
            with self.subTest(values=values):
                config = self.world.config(**values)
                outcome = self.world.dsh("run", "--config", config, "--", "true")
                self.assertNotEqual(outcome.returncode, 0, outcome.stderr)
                self.assertIn(key, outcome.stderr)
                self.assertEqual(len(outcome.stderr.strip().splitlines()), 1, outcome.stderr)


class Facts(SecretsCase):
    """confine's and probe's JSON say what is masked and removed; the confined argv holds them itself."""

    def test_confine_names_the_masks_and_the_removed_variables(self):
        world = self.world

        def body(backend, mode):
            answer = world.dsh("confine", *world.policy(backend, mode), "--", "python3", "-c", DUMP, world.home,
                               "--", *world.secrets)
            self.assertEqual(answer.returncode, 0, answer.stderr)
            facts = json.loads(answer.stdout)
            masked = facts.get("masked", [])
            for path in (os.path.join(world.home, ".aws"), os.path.join(world.home, ".ssh", "id_ed25519"),
                         os.path.join(world.home, ".netrc"), os.path.join(world.home, ".claude", ".credentials.json")):
                self.assertIn(path, masked, f"{backend} {mode}")
            self.assertIn(os.path.join(world.home, ".ssh", "*"), masked)
            self.assertNotIn(os.path.join(world.home, ".ssh", "id_ed25519.pub"), masked)
            removed = facts.get("environmentRemoved", [])
            self.assertEqual(sorted(set(SECRET_ENV) - set(removed)), [], f"{backend} {mode}: {removed}")
            self.assertEqual([name for name in VISIBLE_ENV if name in removed], [])
            self.assertNotIn("GOOGLE_APPLICATION_CREDENTIALS", removed)
            # A harness spawns the argv with its own environment: the launcher removes the secrets again.
            ran = subprocess.run(facts["argv"], capture_output=True, text=True, check=False, env=world.env,
                                 cwd=world.workspace, timeout=300, errors="replace")
            self.assertIn("DUMP-COMPLETE", ran.stdout, ran.stderr[-2000:])
            self.assertEqual(world.leaked(ran.stdout + ran.stderr), [], f"{backend} {mode}: the confined argv leaked")
        self.each(body)

    def test_probe_lists_the_defaults(self):
        answer = self.world.dsh("probe", "--json")
        self.assertEqual(answer.returncode, 0, answer.stderr)
        secrets = json.loads(answer.stdout).get("secrets")
        self.assertIsInstance(secrets, dict, answer.stdout)
        self.assertEqual([entry for entry in DEFAULT_ENTRIES if entry not in secrets.get("maskedPaths", [])], [])
        self.assertIs(secrets.get("requireMasks"), False)
        deny = secrets.get("environmentDeny", [])
        for pattern in ("*_TOKEN", "*_SECRET", "*PASSWORD*", "*_API_KEY", "AWS_SECRET_ACCESS_KEY", "SSH_AUTH_SOCK"):
            self.assertIn(pattern, deny)
        self.assertEqual(secrets.get("environmentAllow", []), [])
        config = self.world.config(maskedPaths=["vault"], requireMasks=True, environment={"allow": ["GH_TOKEN"]})
        secrets = json.loads(self.world.dsh("probe", "--json", "--config", config).stdout).get("secrets", {})
        self.assertEqual((secrets.get("maskedPaths"), secrets.get("requireMasks"), secrets.get("environmentAllow")),
                         (["vault"], True, ["GH_TOKEN"]))


class FileGuard(SecretsCase):
    """`dsh-sandbox fs read` refuses a masked path with the text of every denial."""

    def test_fs_read_of_a_masked_path_is_refused(self):
        world = self.world
        link = os.path.join(world.workspace, "innocent")
        os.symlink(os.path.join(world.home, ".ssh", "id_ed25519"), link)
        absent = os.path.join(world.home, ".ssh", "id_absent")
        for mode in MODES:
            for path in [*world.secrets, link, absent]:
                with self.subTest(mode=mode, path=path):
                    outcome = world.dsh("fs", "read", "--mode", mode, "--root", world.workspace, path)
                    self.assertEqual(outcome.returncode, 1, outcome.stderr)
                    # The spec's one text for every denial (SYSTEM.md: it says "write" for a read too), so the
                    # answer tells a masked name from no other denial, and nothing a "not found" would.
                    self.assertEqual(outcome.stderr, f'dsh-sandbox: FS_SANDBOX_DENIED: cannot write "{path}": '
                                     f'file access denied under {mode} mode\n')
                    self.assertEqual(world.leaked(outcome.stdout + outcome.stderr), [])
            public = os.path.join(world.home, ".ssh", "id_ed25519.pub")
            shown = world.dsh("fs", "read", "--mode", mode, "--root", world.workspace, public)
            self.assertEqual(shown.returncode, 0, shown.stderr)
            self.assertIn(world.visible[public], shown.stdout)

    def test_mcp_read_file_refuses_a_masked_path(self):
        world = self.world
        key = os.path.join(world.home, ".aws", "credentials")
        requests = [{"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                     "params": {"name": "read_file", "arguments": {"path": key}}}]
        answers = livability.mcp_results(self, ["--mode", "read-only", "--root", world.workspace], requests, world.env)
        self.assertTrue(answers[2].get("isError"), answers)
        self.assertNotIn(world.secrets[key], json.dumps(answers))


class HomeIsTheWorkspaceGuard(SecretsCase):
    home_is_workspace = True

    def test_fs_move_or_edit_of_a_masked_path_is_refused_and_the_disk_unchanged(self):
        world = self.world
        # .aws and .netrc: no protected subpath of a home (issue 19) refuses these already, only the mask.
        ordinary = os.path.join(world.home, "ordinary.txt")
        write_file(ordinary, "plain\n")
        moved = world.dsh("fs", "mv", "--mode", "workspace-write", "--root", world.workspace, ordinary,
                          ordinary + ".moved")
        self.assertEqual(moved.returncode, 0, f"the control: an ordinary move: {moved.stderr}")
        key = os.path.join(world.home, ".aws", "credentials")
        for args in (["mv", key, os.path.join(world.home, "stolen")], ["rm", key],
                     ["mv", os.path.join(world.home, ".netrc"), os.path.join(world.home, "stolen")],
                     ["edit", "--old", "aws_secret_access_key", "--new", "x", key]):
            with self.subTest(args=args[:2]):
                outcome = world.dsh("fs", args[0], "--mode", "workspace-write", "--root", world.workspace, *args[1:])
                self.assertEqual(outcome.returncode, 1, outcome.stderr)
                self.assertIn("FS_SANDBOX_DENIED", outcome.stderr)
                self.assertIn(world.secrets[key], read_file(key))
                self.assertFalse(os.path.lexists(os.path.join(world.home, "stolen")))
        copied = world.dsh("fs", "write", "--mode", "workspace-write", "--root", world.workspace, key,
                           stdin="hostile\n")
        self.assertEqual(copied.returncode, 1, copied.stderr)
        self.assertIn(world.secrets[key], read_file(key))


class OrdinaryWork(SecretsCase):
    """What must keep working with the masks in place."""

    def test_git_commit_with_the_homes_identity(self):
        if not shutil.which("git"):
            self.skipTest("git is not installed")
        world = self.world

        def body(backend, _mode):
            repo = os.path.join(world.workspace, f"repo-{backend}")
            script = (f"git init -q {repo} && cd {repo} && echo hello > file && git add file && "
                      "git commit -q -m first && git log -1 --format='%an <%ae>'; cat ~/.git-credentials")
            outcome = world.run(backend, "workspace-write", "bash", "-c", script)
            self.assertEqual(world.leaked(outcome.stdout + outcome.stderr), [], "git credentials were read")
            author = subprocess.run(["git", "-C", repo, "log", "-1", "--format=%an <%ae>"], capture_output=True,
                                    text=True, check=False)
            self.assertEqual(author.stdout.strip(), f"{world.identity[0]} <{world.identity[1]}>",
                             f"{backend}: {outcome.stdout}{outcome.stderr}{author.stderr}")
        self.each(body, modes=("workspace-write",))

    def test_npm_install_of_a_local_tarball_offline(self):
        if not shutil.which("npm"):
            self.skipTest("npm is not installed")
        world = self.world
        package = os.path.join(world.elsewhere, "tiny")
        write_file(os.path.join(package, "package.json"),
                   json.dumps({"name": "tiny-secrets-fixture", "version": "1.0.0", "main": "index.js"}), 0o644)
        write_file(os.path.join(package, "index.js"), "module.exports = 'tiny works';\n", 0o644)
        pack_env = dict(os.environ, HOME=world.elsewhere, npm_config_cache=os.path.join(world.elsewhere, "cache"))
        packed = subprocess.run(["npm", "pack", "--silent", "--pack-destination", world.workspace, package],
                                capture_output=True, text=True, check=False, env=pack_env, timeout=300)
        tarball = os.path.join(world.workspace, "tiny-secrets-fixture-1.0.0.tgz")
        self.assertTrue(os.path.isfile(tarball), packed.stderr)
        token = world.secrets[os.path.join(world.home, ".npmrc")]

        def body(backend, _mode):
            app = os.path.join(world.workspace, f"app-{backend}")
            write_file(os.path.join(app, "package.json"), json.dumps({"name": "app", "version": "1.0.0"}), 0o644)
            script = (f"cd {app} && npm install --offline --no-audit --no-fund {tarball} && "
                      "node -e \"console.log(require('tiny-secrets-fixture'))\"; "
                      "npm config get //registry.npmjs.org/:_authToken")
            outcome = world.run(backend, "workspace-write", "bash", "-c", script)
            self.assertIn("tiny works", outcome.stdout, outcome.stderr[-2000:])
            self.assertTrue(os.path.isfile(os.path.join(app, "node_modules", "tiny-secrets-fixture", "index.js")))
            self.assertNotIn(token, outcome.stdout + outcome.stderr, f"{backend}: npm read the home's token")
        self.each(body, modes=("workspace-write",))

    def test_ssh_agent_reached_only_through_an_allowed_socket(self):
        if not (shutil.which("ssh-agent") and shutil.which("ssh-add") and shutil.which("ssh-keygen")):
            self.skipTest("openssh-client is not installed")
        world = self.world
        keys = tempfile.mkdtemp(prefix="agent-", dir="/var/tmp")  # short: a socket path
        self.addCleanup(shutil.rmtree, keys, True)
        socket_path = os.path.join(keys, "agent.sock")
        agent = subprocess.Popen(["ssh-agent", "-D", "-a", socket_path], stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)
        self.addCleanup(agent.wait)
        self.addCleanup(agent.terminate)
        while not os.path.exists(socket_path):
            self.assertIsNone(agent.poll(), "ssh-agent ended")
            os.sched_yield()
        key = os.path.join(keys, "throwaway")
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", key], check=True)
        agent_env = dict(world.env, SSH_AUTH_SOCK=socket_path)
        subprocess.run(["ssh-add", "-q", key], check=True, env=agent_env, capture_output=True)
        fingerprint = subprocess.run(["ssh-keygen", "-lf", key + ".pub"], capture_output=True, text=True,
                                     check=True).stdout.split()[1]
        script = 'echo "sock=$SSH_AUTH_SOCK"; ssh-add -l; echo "status=$?"'

        def body(backend, mode):
            allowed = world.run(backend, mode, "bash", "-c", script, extra=("--allow-unix-socket", socket_path),
                                env=agent_env)
            self.assertIn(f"sock={socket_path}\n", allowed.stdout, allowed.stderr)
            self.assertIn(fingerprint, allowed.stdout, allowed.stderr)
            self.assertIn("status=0", allowed.stdout)
            refused = world.run(backend, mode, "bash", "-c", script, env=agent_env)
            self.assertIn("sock=\n", refused.stdout, refused.stderr)
            self.assertNotIn(fingerprint, refused.stdout)
            self.assertNotIn("status=0", refused.stdout)
        self.each(body)
        self.ssh_to_loopback_with_the_agent(socket_path, agent_env)

    def ssh_to_loopback_with_the_agent(self, socket_path, agent_env):
        """The repo's sshd fixture: the agent holds the only key the server accepts."""
        import sshd_fixture  # noqa: E402 (tests/remote)
        try:
            server = sshd_fixture.SshServer(BIN, clean_home=True)
        except sshd_fixture.SkipTest as reason:
            print(f"# SKIP: ssh to loopback: {reason}")
            return
        self.addCleanup(server.close)
        subprocess.run(["ssh-add", "-q", os.path.join(server.dir, "user_key")], check=True, env=agent_env,
                       capture_output=True)
        config = os.path.join(server.dir, "agent_config")
        user = os.environ.get("USER") or "root"
        write_file(config, f"Host agent-test\n  HostName 127.0.0.1\n  Port {server.port}\n  User {user}\n"
                           f"  UserKnownHostsFile {server.dir}/known_hosts\n  GlobalKnownHostsFile /dev/null\n"
                           "  StrictHostKeyChecking yes\n  BatchMode yes\n  PreferredAuthentications publickey\n",
                   0o644)
        command = ["ssh", "-F", config, "agent-test", "echo", "remote-said-hello"]
        for backend in self.backends:
            with self.subTest(backend=backend, over="ssh"):
                reached = self.world.run(backend, "read-only", *command, extra=("--allow-unix-socket", socket_path),
                                         env=agent_env)
                self.assertIn("remote-said-hello", reached.stdout, reached.stderr[-2000:])
                refused = self.world.run(backend, "read-only", *command, env=agent_env)
                self.assertNotIn("remote-said-hello", refused.stdout, "logged in without the agent")

    def test_bash_tool_and_serve_hold_the_secrets_too(self):
        world = self.world
        for backend in self.backends:
            with self.subTest(backend=backend, tool="bash"):
                answer = world.dsh("bash", "--json", *world.policy(backend, "read-only"), "--",
                                   f"cat {' '.join(world.secrets)}; env; echo finished")
                facts = json.loads(answer.stdout)
                self.assertIn("finished", facts["stdout"]["text"], answer.stdout)
                self.assertEqual(world.leaked(answer.stdout + answer.stderr), [])
        notes = os.path.join(world.home, "notes.txt")
        write_file(notes, "SECRETMARK-serve-notes\n")
        config = world.config(backends=self.backends[:1])
        requests = [("bash.run", {"mode": "read-only", "root": world.workspace,
                                  "command": f"cat {notes}; echo token=$GITHUB_TOKEN; echo aws=$AWS_SECRET_ACCESS_KEY",
                                  "maskedPaths": ["notes.txt"], "allowEnvironment": ["GITHUB_TOKEN"]})]
        env = dict(world.env, DSH_SANDBOX_CONFIG=config)
        answers = livability.serve_results(self, requests, env, world.workspace)
        text = answers[1]["stdout"]["text"]
        self.assertNotIn("SECRETMARK-serve-notes", text)
        self.assertIn(f"token={world.secret_env['GITHUB_TOKEN']}", text)
        self.assertIn("aws=\n", text)


if __name__ == "__main__":
    sys.exit(livability.run_suite(__name__))
