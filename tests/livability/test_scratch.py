#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The session's scratch: /tmp, TMPDIR and package-manager caches, on both backends, judged on disk.

Each case runs the built `dsh-sandbox` ($DSH_SANDBOX_BIN) with a throwaway HOME under
$DSH_TEST_SCRATCH (so the scratch base is <HOME>/.cache/dsh-sandbox/scratch and the user's
~/.npm, ~/.cache/pip, ~/.cargo are the test's own), one backend at a time (a config file
naming it, so `fs` and `bash` select the same one), and checks what landed where.

Output is unittest's verbose form on stdout, one line per case, then one closing line
"N passed, N failed, N skipped".  No network: npm installs a tarball `npm pack` made
(--offline, a registry that is not there), pip a wheel this file writes (--no-index),
cargo a crate without dependencies (--offline).
"""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from livability import BIN, SCRATCH, run_suite  # noqa: E402
import uuid
import zipfile

PATIENCE = 300   # an upper bound for one command (npm, cargo), never a measurement
PYTHON = os.path.realpath(sys.executable)


def backend_works(backend):
    """Whether `backend` can confine here: a real confined run, not a guess."""
    if not BIN:
        return False, "DSH_SANDBOX_BIN is not set"
    result = subprocess.run([BIN, "run", "--backend", backend, "--mode", "workspace-write", "--root", SCRATCH,
                             "--", "true"], capture_output=True, check=False, timeout=PATIENCE)
    return result.returncode == 0, result.stderr.decode(errors="replace").strip()


os.makedirs(SCRATCH, exist_ok=True)
USABLE = {name: backend_works(name) for name in ("bwrap", "landlock")}


def tool(name):
    """The program `name` from this process's PATH (resolved now: the commands run with a throwaway HOME)."""
    return shutil.which(name)


class ScratchCase(unittest.TestCase):
    backend = None

    def setUp(self):
        usable, why = USABLE[self.backend]
        if not usable:
            self.skipTest(f"the {self.backend} backend cannot confine here: {why}")
        self.top = tempfile.mkdtemp(prefix="livability-", dir=SCRATCH)
        self.home = os.path.join(self.top, "home")
        self.workspace = os.path.join(self.top, "ws")
        os.makedirs(self.home)
        os.makedirs(self.workspace)
        self.config = os.path.join(self.top, "config.json")
        with open(self.config, "w", encoding="utf-8") as handle:
            json.dump({"backends": [self.backend]}, handle)
        self.base = os.path.join(self.home, ".cache", "dsh-sandbox", "scratch")
        self.host_tmp_names = []

    def tearDown(self):
        for name in self.host_tmp_names:
            path = os.path.join("/tmp", name)
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path, ignore_errors=True)
            elif os.path.lexists(path):
                os.unlink(path)
        shutil.rmtree(self.top, ignore_errors=True)

    # ------------------------------------------------------------ helpers --

    def unique(self, stem):
        """A fresh name for /tmp; removed from the host's /tmp at the end if a backend put it there."""
        name = f"{stem}-{uuid.uuid4().hex[:12]}"
        self.host_tmp_names.append(name)
        return name

    def environment(self, **extra):
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": self.home,
            "DSH_SANDBOX_CONFIG": self.config,
            "LANG": "C.UTF-8",
        }
        for name in ("DSH_SANDBOX_BWRAP", "RUSTUP_HOME"):
            if name in os.environ:
                env[name] = os.environ[name]
        env.update(extra)
        return {name: value for name, value in env.items() if value is not None}

    def dsh(self, *arguments, stdin=b"", env=None, cwd=None):
        return subprocess.run([BIN, *arguments], input=stdin, capture_output=True, check=False,
                              env=env or self.environment(), cwd=cwd or self.workspace, timeout=PATIENCE)

    def new_session(self):
        made = self.dsh("session", "new", "--cwd", self.workspace)
        self.assertEqual(made.returncode, 0, made.stderr)
        session = made.stdout.decode().strip()
        moded = self.dsh("session", "mode", session, "workspace-write")
        self.assertEqual(moded.returncode, 0, moded.stderr)
        return session

    def run_in(self, session, line, env=None):
        return self.dsh("run", "--session", session, "--", "sh", "-c", line, env=env)

    def run_mode(self, mode, *argv, env=None):
        return self.dsh("run", "--mode", mode, "--root", self.workspace, "--", *argv, env=env)

    def ok(self, result):
        self.assertEqual(result.returncode, 0, result.stderr.decode(errors="replace"))
        return result.stdout.decode()

    def keys(self):
        """The scratch keys on disk: <base>/<key>/ with tmp/ and cache/."""
        return sorted(os.listdir(self.base)) if os.path.isdir(self.base) else []

    def scratch_temp_holding(self, name):
        """The scratch temp areas that hold `name`."""
        return glob.glob(os.path.join(self.base, "*", "tmp", name))

    def assert_lands_in_the_command_tmp(self, name, content):
        """bwrap: in exactly one scratch, not on the host; Landlock: on the host's /tmp."""
        host = os.path.join("/tmp", name)
        if self.backend == "bwrap":
            self.assertFalse(os.path.lexists(host), f"{host} reached the host's /tmp")
            found = self.scratch_temp_holding(name)
            self.assertEqual(len(found), 1, found)
            path = found[0]
        else:
            path = host
        with open(path, encoding="utf-8") as handle:
            self.assertEqual(handle.read(), content)
        return path


class TempArea:
    """/tmp across the calls of a session, and the file guard's /tmp: the same as the command's."""

    def test_tmp_persists_across_the_calls_of_a_session(self):
        session, name = self.new_session(), self.unique("persist")
        self.ok(self.run_in(session, f"echo one > /tmp/{name}"))
        self.assertEqual(self.ok(self.dsh("bash", "--session", session, "--", f"cat /tmp/{name}")), "one\n")
        self.assert_lands_in_the_command_tmp(name, "one\n")

    def test_fs_write_then_bash_cat_and_the_reverse(self):
        session, there, back = self.new_session(), self.unique("guard"), self.unique("back")
        self.ok(self.dsh("fs", "write", "--session", session, f"/tmp/{there}", stdin=b"from the guard\n"))
        self.assertEqual(self.ok(self.dsh("bash", "--session", session, "--", f"cat /tmp/{there}")),
                         "from the guard\n")
        self.ok(self.dsh("bash", "--session", session, "--", f"echo from bash > /tmp/{back}"))
        self.assertEqual(self.ok(self.dsh("fs", "read", "--session", session, f"/tmp/{back}")), "from bash\n")
        self.assert_lands_in_the_command_tmp(there, "from the guard\n")
        self.assert_lands_in_the_command_tmp(back, "from bash\n")

    def test_the_guard_maps_only_what_the_command_sees_beneath_tmp(self):
        session = self.new_session()
        # `..` out of /tmp is "/" inside the sandbox too: denied, and nothing written anywhere.
        escaped = self.dsh("fs", "write", "--session", session, f"/tmp/..{self.top}/escaped", stdin=b"x")
        self.assertEqual(escaped.returncode, 1, escaped.stderr)
        self.assertIn(b"FS_SANDBOX_DENIED", escaped.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.top, "escaped")))
        self.assertEqual(glob.glob(os.path.join(self.base, "*", "tmp", "..*")), [])

    def test_a_workspace_beneath_tmp_stays_the_hosts(self):
        workspace = tempfile.mkdtemp(prefix="livability-ws-", dir="/tmp")
        self.host_tmp_names.append(os.path.basename(workspace))
        made = self.dsh("session", "new", "--cwd", workspace)
        self.assertEqual(made.returncode, 0, made.stderr)
        session = made.stdout.decode().strip()
        self.ok(self.dsh("session", "mode", session, "workspace-write"))
        self.ok(self.dsh("fs", "write", "--session", session, f"{workspace}/f", stdin=b"in the workspace\n"))
        self.assertEqual(self.ok(self.dsh("bash", "--session", session, "--", f"cat {workspace}/f")),
                         "in the workspace\n")
        with open(os.path.join(workspace, "f"), encoding="utf-8") as handle:
            self.assertEqual(handle.read(), "in the workspace\n")
        # Read-only bwrap puts a fresh tmpfs on /tmp: the workspace and the cwd beneath it are bound back.
        self.assertEqual(self.ok(self.dsh("run", "--mode", "read-only", "--root", workspace, "--", "cat", "f",
                                          cwd=workspace)), "in the workspace\n")

    def test_sessionless_calls_of_one_workspace_share_tmp(self):
        name = self.unique("workspace-keyed")
        self.ok(self.run_mode("workspace-write", "sh", "-c", f"echo kept > /tmp/{name}"))
        self.assertEqual(self.ok(self.run_mode("workspace-write", "cat", f"/tmp/{name}")), "kept\n")
        self.assert_lands_in_the_command_tmp(name, "kept\n")

    def test_a_caller_tmpdir_the_policy_does_not_grant_is_replaced(self):
        for mode in ("workspace-write", "read-only") if self.backend == "bwrap" else ("workspace-write",):
            with self.subTest(mode=mode):
                env = self.environment(TMPDIR="/nonexistent-or-ungranted")
                out = self.ok(self.run_mode(mode, "sh", "-c", 'echo "$TMPDIR"; f=$(mktemp) && echo x > "$f" && '
                                                              'echo "$f" && rm "$f"', env=env))
                tmpdir, made = out.splitlines()
                self.assertEqual(tmpdir, "/tmp")
                self.assertTrue(made.startswith("/tmp/tmp."), made)

    def test_danger_full_access_keeps_the_callers_tmpdir(self):
        env = self.environment(TMPDIR=self.top)
        self.assertEqual(self.ok(self.run_mode("danger-full-access", "sh", "-c", 'echo "$TMPDIR"', env=env)),
                         self.top + "\n")


class BwrapOnly:
    def test_two_sessions_do_not_see_each_others_tmp_nor_scratch(self):
        first, second, name = self.new_session(), self.new_session(), self.unique("private")
        self.ok(self.run_in(first, f"echo mine > /tmp/{name}"))
        path = self.assert_lands_in_the_command_tmp(name, "mine\n")
        seen = self.run_in(second, f"cat /tmp/{name} || cat {path}")
        self.assertNotEqual(seen.returncode, 0)
        self.assertNotIn(b"mine", seen.stdout)
        # Every session's scratch is hidden behind a tmpfs: the second sees its own cache alone.
        listing = self.ok(self.run_in(second, f"ls -A {self.base}")).split()
        self.assertEqual(len(listing), 1, listing)
        self.assertEqual(len(self.keys()), 2)

    def test_read_only_has_scratch_that_changes_nothing_on_the_host(self):
        program, source = self.unique("app"), self.unique("app-source")
        line = (f"f=$(mktemp) && echo scratch > \"$f\" && cat \"$f\" && "
                f"printf 'int main(void) {{ return 42; }}\\n' > /tmp/{source}.c && "
                f"cc -o /tmp/{program} /tmp/{source}.c && /tmp/{program}; echo \"status $?\"; "
                f"{PYTHON} -c 'import tempfile; tempfile.NamedTemporaryFile(); print(\"tempfile ok\")'")
        out = self.ok(self.run_mode("read-only", "sh", "-c", line))
        self.assertEqual(out.splitlines(), ["scratch", "status 42", "tempfile ok"])
        for name in (program, source + ".c"):
            self.assertFalse(os.path.lexists(os.path.join("/tmp", name)), name)
        self.assertEqual(self.keys(), [], "read-only made a scratch on the host")
        # Read-only still changes nothing outside /tmp.
        denied = self.run_mode("read-only", "sh", "-c", f"echo x > {self.workspace}/new")
        self.assertNotEqual(denied.returncode, 0)
        self.assertFalse(os.path.exists(os.path.join(self.workspace, "new")))


class LandlockOnly:
    def test_read_only_has_no_scratch_as_probe_and_the_docs_say(self):
        name = self.unique("ro-landlock")
        refused = self.run_mode("read-only", "sh", "-c", f"echo x > /tmp/{name}")
        self.assertNotEqual(refused.returncode, 0)
        self.assertIn(b"Permission denied", refused.stderr)
        self.assertFalse(os.path.lexists(os.path.join("/tmp", name)))
        self.assertIn("read-only: no scratch space under landlock", self.ok(self.dsh("probe")))
        report = json.loads(self.ok(self.dsh("probe", "--json")))
        landlock = [entry for entry in report["backends"] if entry["name"] == "landlock"][0]
        self.assertTrue(any(note.startswith("read-only: no scratch space under landlock")
                            for note in landlock["notes"]), landlock)


class Reach:
    """A confined command can write neither another session's scratch nor the base, nor move its own."""

    def test_no_write_to_another_sessions_scratch_nor_the_base(self):
        victim, attacker = self.new_session(), self.new_session()
        self.ok(self.run_in(victim, f"echo victim > /tmp/{self.unique('victim')}"))
        self.ok(self.run_in(attacker, "true"))
        before = {key: sorted(os.listdir(os.path.join(self.base, key))) for key in self.keys()}
        owners = {key: open(os.path.join(self.base, key, "owner"), encoding="utf-8").read() for key in self.keys()}
        victim_key = [key for key, text in owners.items() if victim in text][0]
        attacker_key = [key for key, text in owners.items() if attacker in text][0]
        victim_dir, attacker_dir = os.path.join(self.base, victim_key), os.path.join(self.base, attacker_key)
        attempts = [
            f"echo evil > {victim_dir}/tmp/evil",
            f"echo evil > {victim_dir}/cache/evil",
            f"echo evil > {self.base}/evil",
            f"mkdir {self.base}/newkey",
            f"echo {victim} > {attacker_dir}/owner",
            f"mv {attacker_dir}/cache {attacker_dir}/moved",
            f"mv {attacker_dir}/tmp {attacker_dir}/moved-tmp",
            f"ln -s /etc {attacker_dir}/link",
        ]
        for line in attempts:
            with self.subTest(line=line):
                self.run_in(attacker, line)
        after = {key: sorted(os.listdir(os.path.join(self.base, key))) for key in self.keys()}
        self.assertEqual(after, before)
        for key, text in owners.items():
            with open(os.path.join(self.base, key, "owner"), encoding="utf-8") as handle:
                self.assertEqual(handle.read(), text)
        self.assertEqual(os.listdir(os.path.join(victim_dir, "cache")), [])
        self.assertFalse(os.path.exists(os.path.join(victim_dir, "tmp", "evil")))

    def test_a_planted_symlink_for_a_scratch_directory_is_refused_not_followed(self):
        session = self.new_session()
        self.ok(self.run_in(session, "true"))
        [key] = self.keys()
        temp = os.path.join(self.base, key, "tmp")
        decoy = os.path.join(self.top, "decoy")
        os.makedirs(decoy)
        shutil.rmtree(temp)
        os.symlink(decoy, temp)
        refused = self.run_in(session, "echo planted > /tmp/through-link")
        self.host_tmp_names.append("through-link")
        self.assertEqual(refused.returncode, 125, refused.stderr)
        self.assertIn(b"SANDBOX_INVALID_TEMP_ROOT", refused.stderr)
        self.assertEqual(os.listdir(decoy), [])

    def test_a_scratch_directory_made_writable_by_others_is_private_again(self):
        session = self.new_session()
        self.ok(self.run_in(session, "true"))
        [key] = self.keys()
        cache = os.path.join(self.base, key, "cache")
        os.chmod(cache, 0o777)
        self.ok(self.run_in(session, "true"))
        self.assertEqual(os.stat(cache).st_mode & 0o777, 0o700)


class PackageManagers:
    """Package managers in workspace-write with their default configuration: no shared cache touched."""

    def user_cache_tree(self):
        """Every file under the throwaway HOME but the sandbox's own (cache, sessions): what a tool could write."""
        found = []
        for directory, subdirectories, files in os.walk(self.home):
            subdirectories[:] = [name for name in subdirectories if name != "dsh-sandbox"]
            found.extend(os.path.relpath(os.path.join(directory, name), self.home) for name in files)
            found.extend(os.path.relpath(os.path.join(directory, name), self.home) + "/" for name in subdirectories)
        return sorted(found)

    def seed_user_caches(self):
        for relative in (".npm/_cacache/marker", ".cache/pip/marker", ".cargo/marker"):
            path = os.path.join(self.home, relative)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as handle:
                handle.write("the user's\n")
        return self.user_cache_tree()

    def scratch_cache(self, name):
        [key] = self.keys()
        return os.path.join(self.base, key, "cache", name)

    def test_npm_install_of_a_packed_tarball(self):
        npm = tool("npm")
        if not npm:
            self.skipTest("npm is not installed")
        package = os.path.join(self.top, "pkg")
        os.makedirs(package)
        with open(os.path.join(package, "package.json"), "w", encoding="utf-8") as handle:
            json.dump({"name": "livability-pkg", "version": "1.0.0", "main": "index.js",
                       "bin": {"livability-hello": "index.js"}}, handle)
        with open(os.path.join(package, "index.js"), "w", encoding="utf-8") as handle:
            handle.write("#!/usr/bin/env node\nconsole.log('hello from the package');\n")
        packed = subprocess.run([npm, "pack", "--silent", "--pack-destination", self.workspace], cwd=package,
                                env=self.environment(npm_config_cache=os.path.join(self.top, "pack-cache")),
                                capture_output=True, check=False, timeout=PATIENCE)
        self.assertEqual(packed.returncode, 0, packed.stderr)
        with open(os.path.join(self.workspace, "package.json"), "w", encoding="utf-8") as handle:
            json.dump({"name": "workspace", "version": "1.0.0"}, handle)
        session = self.new_session()   # the session store lives in HOME too: made before the snapshot
        before = self.seed_user_caches()
        self.ok(self.dsh("bash", "--session", session, "--",
                         "npm install ./livability-pkg-1.0.0.tgz --offline --no-audit --no-fund "
                         "--registry http://127.0.0.1:9/"))
        self.assertTrue(os.path.isfile(os.path.join(self.workspace, "node_modules", "livability-pkg",
                                                    "package.json")))
        self.assertEqual(self.ok(self.dsh("bash", "--session", session, "--", "npx --offline livability-hello")),
                         "hello from the package\n")
        self.assertEqual(self.user_cache_tree(), before)
        self.assertTrue(os.listdir(self.scratch_cache("npm")), "npm's cache is not in the scratch")

    def write_wheel(self):
        """A pure-Python wheel, written by hand: a zip with the module, METADATA, WHEEL and RECORD."""
        wheel = os.path.join(self.workspace, "livability_wheel-1.0-py3-none-any.whl")
        files = {
            "livability_wheel/__init__.py": "ANSWER = 42\n",
            "livability_wheel-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: livability-wheel\n"
                                                        "Version: 1.0\n",
            "livability_wheel-1.0.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: by-hand\n"
                                                     "Root-Is-Purelib: true\nTag: py3-none-any\n",
        }
        record = "".join(f"{name},,\n" for name in files) + "livability_wheel-1.0.dist-info/RECORD,,\n"
        with zipfile.ZipFile(wheel, "w") as archive:
            for name, text in files.items():
                archive.writestr(name, text)
            archive.writestr("livability_wheel-1.0.dist-info/RECORD", record)
        return wheel

    def test_pip_install_of_a_local_wheel_into_a_workspace_venv(self):
        wheel = self.write_wheel()
        session = self.new_session()   # the session store lives in HOME too: made before the snapshot
        before = self.seed_user_caches()
        venv = os.path.join(self.workspace, "venv")
        self.ok(self.dsh("bash", "--session", session, "--", f"{PYTHON} -m venv {venv}"))
        self.ok(self.dsh("bash", "--session", session, "--", f"{venv}/bin/python -m pip install --no-index {wheel}",
                         env=self.environment(PIP_DISABLE_PIP_VERSION_CHECK="1")))
        answer = self.ok(self.dsh("bash", "--session", session, "--",
                                  f"{venv}/bin/python -c 'import livability_wheel; print(livability_wheel.ANSWER)'"))
        self.assertEqual(answer, "42\n")
        self.assertTrue(glob.glob(os.path.join(venv, "lib", "python*", "site-packages", "livability_wheel",
                                               "__init__.py")))
        self.assertEqual(self.user_cache_tree(), before)

    def test_cargo_build_of_a_crate_without_dependencies(self):
        cargo = tool("cargo")
        if not cargo:
            self.skipTest("cargo is not installed")
        crate = os.path.join(self.workspace, "crate")
        os.makedirs(os.path.join(crate, "src"))
        with open(os.path.join(crate, "Cargo.toml"), "w", encoding="utf-8") as handle:
            handle.write('[package]\nname = "livability"\nversion = "0.1.0"\nedition = "2021"\n')
        with open(os.path.join(crate, "src", "main.rs"), "w", encoding="utf-8") as handle:
            handle.write('fn main() { println!("built confined"); }\n')
        session = self.new_session()   # the session store lives in HOME too: made before the snapshot
        before = self.seed_user_caches()
        # rustup's proxies find their toolchains through RUSTUP_HOME; HOME is the test's own.
        rustup_home = os.environ.get("RUSTUP_HOME", os.path.expanduser("~/.rustup"))
        env = self.environment(RUSTUP_HOME=rustup_home, RUSTUP_AUTO_INSTALL="0")
        self.ok(self.dsh("bash", "--session", session, "--", f"cd {crate} && {cargo} build --offline -q", env=env))
        built = subprocess.run([os.path.join(crate, "target", "debug", "livability")], capture_output=True,
                               check=False, timeout=PATIENCE)
        self.assertEqual(built.stdout, b"built confined\n")
        self.assertEqual(self.user_cache_tree(), before)
        self.assertTrue(os.path.isdir(self.scratch_cache("cargo")), "cargo's home is not in the scratch")

    def test_go_build(self):
        go = tool("go")
        if not go:
            self.skipTest("go is not installed")
        module = os.path.join(self.workspace, "gomod")
        os.makedirs(module)
        with open(os.path.join(module, "go.mod"), "w", encoding="utf-8") as handle:
            handle.write("module example.com/livability\n\ngo 1.18\n")
        with open(os.path.join(module, "main.go"), "w", encoding="utf-8") as handle:
            handle.write('package main\n\nimport "fmt"\n\nfunc main() { fmt.Println("built confined") }\n')
        session = self.new_session()   # the session store lives in HOME too: made before the snapshot
        before = self.seed_user_caches()
        self.ok(self.dsh("bash", "--session", session, "--", f"cd {module} && GOFLAGS=-mod=mod {go} build -o app .",
                         env=self.environment(GOPROXY="off", GOTOOLCHAIN="local")))
        self.assertTrue(os.path.isfile(os.path.join(module, "app")))
        self.assertEqual(self.user_cache_tree(), before)

    def test_yarn_and_pnpm_where_installed(self):
        for name in ("yarn", "pnpm"):
            with self.subTest(tool=name):
                if not tool(name):
                    self.skipTest(f"{name} is not installed")
                self.ok(self.dsh("bash", "--session", self.new_session(), "--", f"{name} --version"))

    def test_a_cache_variable_the_caller_set_is_kept(self):
        shared = os.path.join(self.home, ".npm")
        env = self.environment(npm_config_cache=shared, PIP_CACHE_DIR=None)
        out = self.ok(self.run_mode("workspace-write", "sh", "-c", 'echo "$npm_config_cache"; echo "$PIP_CACHE_DIR"',
                                    env=env))
        npm_cache, pip_cache = out.splitlines()
        self.assertEqual(npm_cache, shared)
        self.assertTrue(pip_cache.startswith(self.base + "/") and pip_cache.endswith("/cache/pip"), pip_cache)


def backend_class(backend, *mixins):
    name = f"{''.join(m.__name__ for m in mixins)}_{backend}"
    return type(name, (*mixins, ScratchCase), {"backend": backend})


for _backend in ("bwrap", "landlock"):
    for _mixin in (TempArea, Reach, PackageManagers):
        _made = backend_class(_backend, _mixin)
        globals()[_made.__name__] = _made
_made = backend_class("bwrap", BwrapOnly)
globals()[_made.__name__] = _made
_made = backend_class("landlock", LandlockOnly)
globals()[_made.__name__] = _made
del _made, _backend, _mixin


if __name__ == "__main__":
    sys.exit(run_suite(__name__))
