#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The agent's launch config and a home's startup files: protected subpaths by default (issue 19, item 4).

A confined command must not rewrite what the agent, the editor or the user's shell later runs
unconfined: `.mcp.json`, `.claude/settings.json`, `.vscode/tasks.json`, ... at every writable root, and
`.bashrc`, `.gitconfig`, `.local/bin`, ... where a writable root holds the home.  Each case runs the
built `dsh-sandbox` ($DSH_SANDBOX_BIN) as a client would, with a HOME and XDG directories of its own
under $DSH_TEST_SCRATCH, and judges the host's disk afterwards: an existing file keeps its content, a
missing one is still missing, an ordinary file beside them was written (so the call itself ran).

Output: unittest's verbose form (one line per case), then "N passed, N failed, N skipped".
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "livability"))
from livability import BIN, SCRATCH, bwrap_works, landlock_abi, run_suite  # noqa: E402

BWRAP = bwrap_works()
LANDLOCK = landlock_abi() >= 1

ORIGINAL = "original\n"
# At every writable root: an existing file or directory of each, what the command tries on it.
ROOT_EXISTING = [".mcp.json", ".cursor/mcp.json", ".claude/settings.json", ".vscode/tasks.json", ".gitmodules",
                 ".envrc", ".husky/pre-commit"]
ROOT_MISSING = [".codex", ".gemini", ".idea", ".agents"]
# Where the root is the home.
HOME_EXISTING = [".bashrc", ".profile", ".gitconfig", ".npmrc", ".zshenv"]
HOME_MISSING = [".bash_profile", ".bash_login", ".bash_logout", ".zshrc", ".zprofile", ".config/git", ".local/bin",
                ".pypirc"]

# What a hostile command does to each: overwrite, append, replace by rename, create beneath, remove.
ATTACK = r"""
for f in "$@"; do
  echo hostile > "$f" 2>/dev/null
  echo hostile >> "$f" 2>/dev/null
  mkdir -p "$(dirname "$f")" 2>/dev/null
  echo hostile > "$f.new" 2>/dev/null && mv -f "$f.new" "$f" 2>/dev/null
  rm -rf "$f.new" 2>/dev/null
  rm -rf "$(dirname "$f")/"* 2>/dev/null
done
for d in "$@"; do
  mkdir -p "$d" 2>/dev/null && echo hostile > "$d/config" 2>/dev/null
done
echo fine > ordinary.txt
"""


class Scratch:
    """A scratch HOME, XDG directories outside every root, and a project directory."""

    def __init__(self):
        os.makedirs(SCRATCH, exist_ok=True)
        self.base = tempfile.mkdtemp(prefix="reach-agent-config-", dir=SCRATCH)
        self.home = os.path.join(self.base, "home")
        self.project = os.path.join(self.base, "project")
        self.xdg = os.path.join(self.base, "xdg")
        for directory in (self.home, self.project, self.xdg):
            os.makedirs(directory)
        self.env = dict(os.environ, HOME=self.home, XDG_CONFIG_HOME=os.path.join(self.xdg, "config"),
                        XDG_STATE_HOME=os.path.join(self.xdg, "state"), XDG_CACHE_HOME=os.path.join(self.xdg, "cache"))
        self.env.pop("DSH_SANDBOX_CONFIG", None)

    def cleanup(self):
        shutil.rmtree(self.base, ignore_errors=True)

    def dsh(self, *args, stdin=""):
        return subprocess.run([BIN, *args], env=self.env, input=stdin, capture_output=True, text=True, timeout=120,
                              check=False)


def plant(root, names):
    """Each name as a file holding ORIGINAL (its directories made)."""
    for name in names:
        path = os.path.join(root, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(ORIGINAL)


def content(path):
    with open(path, encoding="utf-8") as handle:
        return handle.read()


class AgentConfigCase(unittest.TestCase):
    def setUp(self):
        self.scratch = Scratch()

    def tearDown(self):
        self.scratch.cleanup()

    def assert_held(self, root, existing, missing):
        """On the host: every existing one unchanged, every missing one still missing, nothing beside them."""
        for name in existing:
            self.assertEqual(content(os.path.join(root, name)), ORIGINAL, name)
            directory = os.path.dirname(os.path.join(root, name))
            if directory != root:
                self.assertEqual(sorted(os.listdir(directory)), [os.path.basename(name)], name)
        for name in missing:
            self.assertFalse(os.path.lexists(os.path.join(root, name)), f"{name} was created on the host")

    def bash(self, root, script, *names, backend="bwrap"):
        return self.scratch.dsh("bash", "--backend", backend, "--mode", "workspace-write", "--root", root, "--",
                                f"set -- {' '.join(names)}\n{script}")


@unittest.skipUnless(BWRAP, "bwrap cannot make a sandbox on this host")
class BashToolUnderBwrap(AgentConfigCase):
    def test_the_launch_config_at_a_root_is_held_back_and_kept_absent(self):
        root = self.scratch.project
        plant(root, ROOT_EXISTING)
        result = self.bash(root, ATTACK, *ROOT_EXISTING, *ROOT_MISSING)
        self.assertEqual(content(os.path.join(root, "ordinary.txt")), "fine\n", result.stderr)
        self.assert_held(root, ROOT_EXISTING, ROOT_MISSING)
        # The missing ones are refused at creation during the call (issue 20), not left to the audit.
        for name in ROOT_MISSING:
            self.assertNotIn(f"the command created {os.path.join(root, name)}", result.stderr)

    def test_a_homes_startup_files_are_protected_where_the_root_is_the_home(self):
        home = self.scratch.home
        plant(home, HOME_EXISTING)
        script = ATTACK + "git config --global alias.st '!touch /pwned' 2>/dev/null\n"
        result = self.bash(home, script, *HOME_EXISTING, *HOME_MISSING)
        self.assertEqual(content(os.path.join(home, "ordinary.txt")), "fine\n", result.stderr)
        self.assert_held(home, HOME_EXISTING, HOME_MISSING)
        self.assertFalse(os.path.lexists(os.path.join(home, ".config", "git")))

    def test_a_root_that_holds_the_home_protects_it_too(self):
        # The root is an ancestor of the home: the home's files are still its startup files.
        plant(self.scratch.home, [".bashrc"])
        result = self.bash(self.scratch.base, ATTACK, "home/.bashrc", "home/.local/bin")
        self.assertEqual(content(os.path.join(self.scratch.base, "ordinary.txt")), "fine\n", result.stderr)
        self.assert_held(self.scratch.home, [".bashrc"], [".local/bin"])

    def test_startup_file_names_elsewhere_are_ordinary_files(self):
        # Only the home's .bashrc is run by a shell: a project's own may be written.
        root = self.scratch.project
        result = self.bash(root, "echo mine > .bashrc && mkdir -p .local/bin && echo mine > .local/bin/tool",
                           "ignored")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(content(os.path.join(root, ".bashrc")), "mine\n")
        self.assertEqual(content(os.path.join(root, ".local", "bin", "tool")), "mine\n")

    def test_a_symlink_planted_on_the_way_is_moved_aside_and_never_followed(self):
        # ~/.local -> /usr would make ~/.local/bin the host's /usr/bin: the audit that keeps
        # ~/.local/bin absent must move the link, never rename /usr/bin through it.
        home = self.scratch.home
        result = self.bash(home, "ln -s /usr .local && ln -s /etc .config && echo fine > ordinary.txt", "x")
        self.assertEqual(content(os.path.join(home, "ordinary.txt")), "fine\n", result.stderr)
        self.assertFalse(os.path.lexists(os.path.join(home, ".local")), result.stderr)
        self.assertFalse(os.path.lexists(os.path.join(home, ".config")), result.stderr)
        self.assertTrue(os.path.isdir("/usr/bin") and os.path.isdir("/etc"))
        self.assertEqual([name for name in os.listdir("/usr") if "quarantine" in name], [])

    def test_a_later_creation_in_the_call_is_refused(self):
        # Refused at creation during the call (issue 20): nothing lands, so nothing is left for the audit to report.
        root = self.scratch.project
        script = "echo fine > ordinary.txt; sleep 0; printf '{\"mcpServers\":{}}' > .mcp.json; cat .mcp.json"
        result = self.bash(root, script, "x")
        self.assertEqual(content(os.path.join(root, "ordinary.txt")), "fine\n", result.stderr)
        self.assertFalse(os.path.lexists(os.path.join(root, ".mcp.json")))
        self.assertIn("Permission denied", result.stderr)
        self.assertNotIn("the command created", result.stderr)
        # As the agent sees it: a denial.
        answer = self.scratch.dsh("bash", "--json", "--backend", "bwrap", "--mode", "workspace-write", "--root", root,
                                  "--", "mkdir -p .claude && echo '{\"hooks\":{}}' > .claude/settings.json")
        facts = json.loads(answer.stdout)
        self.assertEqual(facts["kind"], "denied", facts)
        self.assertFalse(os.path.lexists(os.path.join(root, ".claude")))

    def test_what_the_supervisor_cannot_refuse_is_undone_and_reported(self):
        assert_socket_moved_aside(self, "bwrap")


def assert_socket_moved_aside(case, backend):
    """A unix socket bound at .mcp.json (bind() is not supervised): the audit after the call moves it aside and says so."""
    root = case.scratch.project
    script = ("echo fine > ordinary.txt; python3 -c 'import socket; socket.socket(socket.AF_UNIX).bind(\".mcp.json\")'")
    result = case.bash(root, script, "x", backend=backend)
    case.assertEqual(content(os.path.join(root, "ordinary.txt")), "fine\n", result.stderr)
    case.assertFalse(os.path.lexists(os.path.join(root, ".mcp.json")), result.stderr)
    case.assertIn(f"the command created {root}/.mcp.json", result.stderr)
    case.assertIn("moved aside", result.stderr)
    answer = case.scratch.dsh("bash", "--json", "--backend", backend, "--mode", "workspace-write", "--root", root, "--",
                              "python3 -c 'import socket; socket.socket(socket.AF_UNIX).bind(\".mcp.json\")'")
    facts = json.loads(answer.stdout)
    case.assertEqual(facts["kind"], "denied", facts)
    case.assertEqual(facts["exitCode"], 0, facts)
    case.assertTrue(any(f"{root}/.mcp.json" in warning for warning in facts["warnings"]), facts)
    case.assertFalse(os.path.lexists(os.path.join(root, ".mcp.json")))


class FileGuard(AgentConfigCase):
    """`dsh-sandbox fs` refuses every change into or of them, whether they exist or not."""

    def fs(self, root, *args, stdin=""):
        return self.scratch.dsh("fs", args[0], "--mode", "workspace-write", "--root", root, *args[1:], stdin=stdin)

    def assert_denied(self, result, what):
        self.assertEqual(result.returncode, 1, f"{what}: {result.stderr}")
        self.assertIn("FS_SANDBOX_DENIED", result.stderr, what)
        self.assertEqual(result.stderr.count("\n"), 1, result.stderr)

    def table(self, root, existing, missing):
        plant(root, existing)
        plant(root, ["ordinary.txt"])
        for name in missing:  # the leaf missing, its directory there (.config without git)
            os.makedirs(os.path.dirname(os.path.join(root, name)), exist_ok=True)
        for name in existing + missing:
            top = name.split("/")[0]
            self.assert_denied(self.fs(root, "write", name, stdin="hostile\n"), f"write {name}")
            if name in missing:  # an existing one is a file: FS_NOT_A_DIRECTORY says enough there
                self.assert_denied(self.fs(root, "write", f"{name}/config", stdin="hostile\n"),
                                   f"write {name}/config")
                self.assert_denied(self.fs(root, "mkdir", "-p", f"{name}/sub"), f"mkdir {name}/sub")
                if "/" not in name:  # else its missing parent is FS_NOT_FOUND, with -p above denied
                    self.assert_denied(self.fs(root, "mkdir", name), f"mkdir {name}")
            else:
                self.assert_denied(self.fs(root, "edit", "--old", "original", "--new", "hostile", name),
                                   f"edit {name}")
            self.assert_denied(self.fs(root, "mv", "ordinary.txt", name), f"mv onto {name}")
            self.assert_denied(self.fs(root, "rm", "-r", top if top != name else name), f"rm {top}")
            self.assert_denied(self.fs(root, "mv", top, "elsewhere"), f"mv {top} away")
        self.assertEqual(self.fs(root, "write", "allowed.txt", stdin="ok\n").returncode, 0)
        self.assertEqual(content(os.path.join(root, "ordinary.txt")), ORIGINAL)
        self.assert_held(root, existing, missing)

    def test_the_launch_config_at_a_root(self):
        self.table(self.scratch.project, ROOT_EXISTING, ROOT_MISSING)

    def test_a_homes_startup_files(self):
        self.table(self.scratch.home, HOME_EXISTING, HOME_MISSING)

    @unittest.skipUnless(BWRAP, "bwrap cannot make a sandbox on this host")
    def test_serve_write_file_refuses_them(self):
        root = self.scratch.project
        requests = []
        for number, name in enumerate([".mcp.json", ".claude/settings.json", ".vscode/tasks.json"], start=2):
            requests.append({"jsonrpc": "2.0", "id": number, "method": "fs.write",
                             "params": {"mode": "workspace-write", "root": root, "path": name,
                                        "content": "hostile"}})
        result = self.scratch.dsh("serve", stdin="".join(json.dumps(request) + "\n" for request in requests))
        answers = [json.loads(line) for line in result.stdout.splitlines() if line.strip()]
        refused = [answer for answer in answers if answer.get("id", 0) >= 2]
        self.assertEqual(len(refused), 3, result.stdout + result.stderr)
        for answer in refused:
            self.assertIn("FS_SANDBOX_DENIED", json.dumps(answer), answer)
        self.assert_held(root, [], [".mcp.json", ".claude", ".vscode"])


class Configuration(AgentConfigCase):
    def config(self, value):
        path = os.path.join(self.scratch.base, "config.json")
        with open(path, "w", encoding="utf-8") as handle:
            json.dump({"protectedSubpaths": value}, handle)
        return path

    @unittest.skipUnless(BWRAP, "bwrap cannot make a sandbox on this host")
    def test_add_and_remove_change_the_defaults(self):
        root = self.scratch.project
        plant(root, [".vscode/tasks.json", "secrets/token", ".mcp.json"])
        path = self.config({"add": ["secrets"], "remove": [".vscode"]})
        result = self.scratch.dsh("bash", "--config", path, "--backend", "bwrap", "--mode", "workspace-write",
                                  "--root", root, "--",
                                  "echo mine > .vscode/tasks.json; echo hostile > secrets/token; "
                                  "echo hostile > .mcp.json; true")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(content(os.path.join(root, ".vscode", "tasks.json")), "mine\n")
        self.assertEqual(content(os.path.join(root, "secrets", "token")), ORIGINAL)
        self.assertEqual(content(os.path.join(root, ".mcp.json")), ORIGINAL)
        denied = self.scratch.dsh("fs", "write", "--config", path, "--mode", "workspace-write", "--root", root,
                                  "secrets/new", stdin="x")
        self.assertIn("FS_SANDBOX_DENIED", denied.stderr)
        allowed = self.scratch.dsh("fs", "write", "--config", path, "--mode", "workspace-write", "--root", root,
                                   ".vscode/settings.json", stdin="{}")
        self.assertEqual(allowed.returncode, 0, allowed.stderr)

    def test_bad_entries_are_one_line_errors_naming_them(self):
        cases = [
            ({"remove": [".not-a-default"]}, 'key "protectedSubpaths.remove": entry 0 (".not-a-default") is not a '
                                             "default protected subpath"),
            ({"add": ["/etc/passwd"]}, 'key "protectedSubpaths.add": entry 0 ("/etc/passwd") must be relative'),
            ({"add": ["ok", "a/../b"]}, 'key "protectedSubpaths.add": entry 1 ("a/../b") must not contain ".."'),
            ({"add": ["~/../x"]}, 'entry 0 ("~/../x") must not contain ".."'),
            ({"add": ["~/"]}, 'entry 0 ("~/") must not contain an empty component'),
            ({"drop": []}, 'key "protectedSubpaths": unknown member "drop"'),
            ("all", 'key "protectedSubpaths": expected an array of strings, or an object'),
        ]
        for value, expected in cases:
            with self.subTest(value=value):
                result = self.scratch.dsh("run", "--config", self.config(value), "--mode", "workspace-write",
                                          "--root", self.scratch.project, "--", "touch", "ran")
                self.assertFalse(os.path.exists(os.path.join(self.scratch.project, "ran")))
                self.assertEqual(result.returncode, 2, result.stderr)
                self.assertEqual(result.stderr.count("\n"), 1, result.stderr)
                self.assertIn(expected, result.stderr)


@unittest.skipUnless(LANDLOCK, "the kernel has no Landlock")
class UnderLandlock(AgentConfigCase):
    """The write supervisor holds them back under Landlock too (issue 20): full, and judged on disk as under bwrap."""

    def confine(self, root):
        result = self.scratch.dsh("confine", "--backend", "landlock", "--mode", "workspace-write", "--root", root,
                                  "--", "true")
        self.assertEqual(result.returncode, 0, result.stderr)
        return json.loads(result.stdout)

    def test_a_root_holding_one_runs_full_and_holds_it_back(self):
        plant(self.scratch.project, [".claude/settings.json"])
        facts = self.confine(self.scratch.project)
        self.assertEqual(facts["enforcement"], "full", facts)
        self.assertFalse(any(".claude" in reason for reason in facts.get("partialReasons", [])), facts)
        root = self.scratch.project
        plant(root, ROOT_EXISTING)
        result = self.bash(root, ATTACK, *ROOT_EXISTING, *ROOT_MISSING, backend="landlock")
        self.assertEqual(content(os.path.join(root, "ordinary.txt")), "fine\n", result.stderr)
        self.assert_held(root, ROOT_EXISTING, ROOT_MISSING)

    def test_a_root_holding_none_stays_full(self):
        plant(self.scratch.project, ["src/main.c"])
        self.assertEqual(self.confine(self.scratch.project)["enforcement"], "full")

    def test_a_creation_in_a_spawned_call_is_refused(self):
        root = self.scratch.project
        result = self.bash(root, "echo fine > ordinary.txt; printf '{}' > .mcp.json", "x", backend="landlock")
        self.assertEqual(content(os.path.join(root, "ordinary.txt")), "fine\n", result.stderr)
        self.assertFalse(os.path.lexists(os.path.join(root, ".mcp.json")), result.stderr)
        self.assertIn("Permission denied", result.stderr)
        self.assertNotIn("the command created", result.stderr)
        answer = self.scratch.dsh("bash", "--json", "--backend", "landlock", "--mode", "workspace-write", "--root",
                                  root, "--", "mkdir -p .claude && echo '{\"hooks\":{}}' > .claude/settings.json")
        facts = json.loads(answer.stdout)
        self.assertEqual(facts["kind"], "denied", facts)
        self.assertFalse(os.path.lexists(os.path.join(root, ".claude")))

    def test_what_the_supervisor_cannot_refuse_is_undone_and_reported(self):
        # The audit after a spawned call stays: it catches what slips past the supervisor.
        assert_socket_moved_aside(self, "landlock")


if __name__ == "__main__":
    sys.exit(run_suite(__name__))
