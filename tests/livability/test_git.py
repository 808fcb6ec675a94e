#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""git in a workspace under `dsh-sandbox bash`: what a new user's git commands come back as.

bwrap workspace-write holds .git/config and .git/hooks back (read-only binds over the writable
workspace).  git writes .git/config.lock and renames it over .git/config, a mount point: EBUSY,
or, for some commands, a warning and exit 0 with nothing recorded.  Each such call must come back
as the sandbox's denial (kind "denied", the spec's markers, the message naming the file), with
.git/config unchanged on disk; ordinary git work must complete unmarked; a command that only
prints EBUSY's words for a path that is not held back is not a denial.  Under Landlock the
supervisor holds them back (it decides every write-intent call): the same writes are denied there.

Each case is a real `dsh-sandbox bash` (the built one: $DSH_SANDBOX_BIN) over a real git
repository under $DSH_TEST_SCRATCH; every verdict is checked against the disk.  Output is
unittest's verbose form, one line per case, then "N passed, N failed, N skipped".
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from livability import BIN, SCRATCH, bwrap_works, landlock_abi, run_suite  # noqa: E402

DENIED = "[sandbox: file access denied under workspace-write mode]"
ESCALATION = ("[sandbox: escalation available \u2014 retry this exact command once with sandbox_permissions "
              "(the narrowest wider mode that suffices) + justification; the approval prompt asks the user]")
GIT = shutil.which("git")


BWRAP = bwrap_works()
LANDLOCK = landlock_abi() > 0


class GitWorkspace(unittest.TestCase):
    """A fresh repository with one commit, a HOME and XDG dirs of its own outside the workspace."""
    backend = "bwrap"

    def setUp(self):
        if not GIT:
            self.skipTest("git is not installed")
        os.makedirs(SCRATCH, exist_ok=True)
        self.scratch = tempfile.mkdtemp(prefix="git-", dir=SCRATCH)
        self.addCleanup(shutil.rmtree, self.scratch, True)
        self.home = os.path.join(self.scratch, "home")
        self.repo = os.path.join(self.scratch, "repo")
        os.makedirs(self.home)
        self.env = dict(os.environ, HOME=self.home, XDG_CONFIG_HOME=os.path.join(self.home, ".config"),
                        XDG_STATE_HOME=os.path.join(self.home, ".state"),
                        XDG_CACHE_HOME=os.path.join(self.home, ".cache"), GIT_CONFIG_NOSYSTEM="1",
                        GIT_AUTHOR_NAME="Test", GIT_AUTHOR_EMAIL="test@example.invalid",
                        GIT_COMMITTER_NAME="Test", GIT_COMMITTER_EMAIL="test@example.invalid", LC_ALL="C")
        self.env.pop("DSH_SANDBOX_CONFIG", None)
        self.host_git("init", "-q", "-b", "main", self.repo)
        with open(os.path.join(self.repo, "README"), "w", encoding="utf-8") as handle:
            handle.write("hello\n")
        self.host_git("-C", self.repo, "add", "README")
        self.host_git("-C", self.repo, "commit", "-q", "-m", "first")
        self.config_path = os.path.join(os.path.realpath(self.repo), ".git", "config")
        self.config_before = self.config_bytes()

    def host_git(self, *arguments):
        """git outside the sandbox, for setting up and for reading back what happened."""
        return subprocess.run([GIT, *arguments], env=self.env, capture_output=True, check=True, text=True).stdout

    def config_bytes(self):
        with open(self.config_path, "rb") as handle:
            return handle.read()

    def bash(self, command, json_form=True):
        """`dsh-sandbox bash` in the repository, workspace-write; the result object, or the process."""
        argv = [BIN, "bash", "--backend", self.backend, "--mode", "workspace-write", "--root", self.repo]
        argv += ["--json"] if json_form else []
        done = subprocess.run([*argv, "--", command], cwd=self.repo, env=self.env, capture_output=True,
                              check=False, text=True)
        if not json_form:
            return done
        self.assertEqual(done.returncode, 0, done.stderr)
        return json.loads(done.stdout)

    def assert_held_back_denial(self, command, exit_zero, again=None):
        """`command` changes .git/config: a denial naming it, in both forms, and the file unchanged on disk.

        The human form runs `again` (default: `command`), for a command whose other effects (a ref it
        moved) would make a second run of itself fail for another reason.
        """
        result = self.bash(command)
        self.assertEqual(result["kind"], "denied", result)
        self.assertTrue(result["sandbox"]["denied"], result)
        self.assertEqual(result["sandbox"]["backend"], "bwrap")
        # Only danger-full-access lifts a held-back file: no escalation hint (a hostile script could provoke the
        # denial to have the model ask for it), and the message says to ask the user.
        self.assertEqual(result["markers"], [DENIED])
        self.assertIn(f'"{self.config_path}"', result["message"])
        self.assertIn("only danger-full-access", result["message"])
        self.assertIn("ask the user", result["message"])
        self.assertEqual(result["exitCode"] == 0, exit_zero, result)
        self.assertEqual(self.config_bytes(), self.config_before)
        human = self.bash(again or command, json_form=False)
        self.assertEqual(human.returncode, result["exitCode"], human.stderr)
        lines = human.stderr.splitlines()
        self.assertIn(DENIED, lines)
        self.assertNotIn(ESCALATION, lines)
        self.assertTrue(any(line.startswith("dsh-sandbox: the sandbox holds back") and self.config_path in line
                            for line in lines), human.stderr)
        self.assertEqual(self.config_bytes(), self.config_before)
        return result

    def assert_completed(self, command):
        result = self.bash(command)
        self.assertEqual(result["kind"], "completed", result)
        self.assertFalse(result["sandbox"]["denied"], result)
        self.assertEqual(result["markers"], [])
        self.assertNotIn("message", result)
        return result


@unittest.skipUnless(BWRAP, "bwrap cannot make a sandbox on this host (no user namespace or /proc)")
class HeldBackUnderBwrap(GitWorkspace):
    def test_config_set_is_denied(self):
        result = self.assert_held_back_denial("git config x.y z", exit_zero=False)
        self.assertIn("Device or resource busy", result["stderr"]["text"])
        self.assertNotIn("[x]", self.config_bytes().decode())

    def test_remote_add_is_denied(self):
        self.assert_held_back_denial("git remote add o /somewhere", exit_zero=False)
        self.assertEqual(self.host_git("-C", self.repo, "remote"), "")

    def test_branch_rename_is_denied(self):
        # git renames the ref, then fails on the config: the ref's move is git's, not held back.
        self.assert_held_back_denial("git branch -m main renamed", exit_zero=False,
                                     again="git branch -m renamed again")
        self.assertNotIn("renamed", self.config_bytes().decode())

    def test_checkout_with_tracking_is_denied_though_git_exits_0(self):
        self.host_git("-C", self.repo, "branch", "base")
        self.assert_held_back_denial("git checkout -q -b topic --track base", exit_zero=True,
                                     again="git checkout -q -b other --track base")
        self.assertNotIn("topic", self.config_bytes().decode())

    def test_set_upstream_is_denied_though_git_exits_0(self):
        self.host_git("-C", self.repo, "branch", "base")
        result = self.assert_held_back_denial("git branch --set-upstream-to=base main", exit_zero=True)
        self.assertIn("set up to track", result["stdout"]["text"])
        self.assertNotIn(b"[branch", self.config_bytes())

    def test_a_lock_made_and_removed_is_no_denial(self):
        # A lock next to .git/config is a file in a writable directory: nothing is refused, so nothing
        # is recorded, and the call is not denied.  (The inotify watch once read it as an attempt: a
        # command could fake its own denial so; a denial is now the supervisor's record alone.)
        result = self.assert_completed(": > .git/config.lock; rm .git/config.lock")
        self.assertEqual(result["denials"], [], result)
        self.assertFalse(os.path.exists(self.config_path + ".lock"))
        self.assertEqual(self.config_bytes(), self.config_before)

    def test_sed_in_place_is_denied(self):
        # sed -i renames its own temporary file over .git/config: no lock, so the watch never saw it;
        # the supervisor refuses the rename and records it.
        result = self.assert_held_back_denial("sed -i 's/bare/bear/' .git/config", exit_zero=False)
        self.assertTrue(any(record["path"] == self.config_path and record["rule"] == "protected-subpath"
                            for record in result["denials"]), result)

    def test_a_signal_death_does_not_hide_the_attempt(self):
        # The supervisor's record is evidence whatever the status: dying of a signal, or exiting 130, changes nothing.
        for ending in ("exit 130", "kill -KILL $$"):
            with self.subTest(ending=ending):
                result = self.bash(f"git config core.fsmonitor evil 2>/dev/null; {ending}")
                self.assertEqual(result["kind"], "denied", result)
                self.assertTrue(result["sandbox"]["denied"], result)
                self.assertIn(f'"{self.config_path}"', result["message"])
                self.assertEqual(self.config_bytes(), self.config_before)

    def test_the_users_own_git_config_during_the_call_is_not_its_denial(self):
        # The user's unconfined git replaces .git/config (config.lock renamed over it) while the call
        # runs: that lock is not the call's attempt.  The command waits for the test's gate file.
        started, gate = os.path.join(self.repo, "started"), os.path.join(self.repo, "gate")
        argv = [BIN, "bash", "--backend", self.backend, "--mode", "workspace-write", "--root", self.repo, "--json",
                "--", "touch started; until [ -e gate ]; do sleep 0.01; done"]
        call = subprocess.Popen(argv, cwd=self.repo, env=self.env, stdout=subprocess.PIPE, text=True)
        try:
            while not os.path.exists(started) and call.poll() is None:
                time.sleep(0.005)   # polling for an event, not a timed assertion
            self.host_git("-C", self.repo, "config", "user.x", "y")
        finally:
            open(gate, "w", encoding="utf-8").close()
            output, _ = call.communicate()
        result = json.loads(output)
        self.assertEqual(result["kind"], "completed", result)
        self.assertEqual(result["markers"], [])
        self.assertIn("x = y", self.config_bytes().decode())

    def test_a_hook_write_names_the_hooks(self):
        result = self.bash("echo 'touch /tmp/owned' > .git/hooks/pre-commit")
        self.assertEqual(result["kind"], "denied", result)
        self.assertEqual(result["markers"], [DENIED])
        # The message names what the record says was refused: the hook itself, under .git/hooks.
        self.assertIn('"' + os.path.join(os.path.realpath(self.repo), ".git", "hooks", "pre-commit") + '"',
                      result["message"])
        self.assertFalse(os.path.exists(os.path.join(self.repo, ".git", "hooks", "pre-commit")))

    def test_ordinary_git_work_is_not_marked(self):
        steps = ["echo more >> README && git add README", "git commit -q -m second", "git branch topic",
                 "git status --short", "git log --oneline", "git checkout -q topic", "git stash list"]
        for step in steps:
            with self.subTest(step=step):
                result = self.assert_completed(step)
                self.assertEqual(result["exitCode"], 0, result)
        self.assertIn("second", self.host_git("-C", self.repo, "log", "--oneline", "-1"))
        self.assertEqual(self.host_git("-C", self.repo, "branch", "--show-current").strip(), "topic")
        self.assertEqual(self.config_bytes(), self.config_before)

    def test_busy_words_for_another_path_are_not_a_denial(self):
        result = self.assert_completed("echo 'mv: cannot move x: Device or resource busy' >&2; exit 1")
        self.assertEqual(result["exitCode"], 1)

    def test_busy_words_naming_the_config_with_exit_0_are_not_a_denial(self):
        # Text a command can print counts only for a command that failed.
        result = self.assert_completed("echo 'error: .git/config: Device or resource busy' >&2")
        self.assertEqual(result["exitCode"], 0)

    def test_escalation_to_full_access_changes_the_config(self):
        argv = [BIN, "bash", "--backend", self.backend, "--mode", "workspace-write", "--root", self.repo, "--json",
                "--sandbox-permissions", "danger-full-access", "--justification", "the user asked for a remote",
                "--approval-command", "exit 0", "--", "git remote add o /somewhere"]
        done = subprocess.run(argv, cwd=self.repo, env=self.env, capture_output=True, check=False, text=True)
        result = json.loads(done.stdout)
        self.assertEqual(result["kind"], "completed", result)
        self.assertIn('[remote "o"]', self.config_bytes().decode())


@unittest.skipUnless(BWRAP, "bwrap cannot make a sandbox on this host (no user namespace or /proc)")
class HeldBackThroughMcp(GitWorkspace):
    def test_mcp_bash_git_config_is_denied_naming_the_config(self):
        requests = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
                     "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                "clientInfo": {"name": "test", "version": "0"}}},
                    {"jsonrpc": "2.0", "method": "notifications/initialized"},
                    {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                     "params": {"name": "bash", "arguments": {"command": "git config x.y z"}}}]
        # The end of input cancels what still runs: stdin stays open until the call's answer came.
        server = subprocess.Popen([BIN, "mcp", "--backend", "bwrap", "--mode", "workspace-write", "--root",
                                   self.repo], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, text=True, env=self.env)
        try:
            server.stdin.write("".join(json.dumps(request) + "\n" for request in requests))
            server.stdin.flush()
            answer = None
            for line in server.stdout:
                message = json.loads(line)
                if message.get("id") == 2:
                    answer = message["result"]
                    break
        finally:
            server.stdin.close()
            server.wait()
        self.assertIsNotNone(answer, "the server ended without answering the call")
        self.assertTrue(answer["isError"], answer)
        self.assertEqual(answer["structuredContent"]["kind"], "denied")
        text = "".join(item["text"] for item in answer["content"] if item["type"] == "text")
        self.assertIn(DENIED, text)
        self.assertIn(self.config_path, text)
        self.assertEqual(self.config_bytes(), self.config_before)


@unittest.skipUnless(LANDLOCK, "the kernel has no Landlock")
@unittest.skipUnless(landlock_abi() >= 1, "Landlock is not enforced on this kernel")
class HeldBackUnderLandlock(GitWorkspace):
    """Landlock grants the root whole; the supervisor holds .git/config and .git/hooks back, as bwrap does."""
    backend = "landlock"

    def test_config_set_is_denied_and_the_config_unchanged(self):
        result = self.bash("git config x.y z")
        self.assertEqual(result["kind"], "denied", result)
        self.assertEqual(result["sandbox"]["enforcement"], "full", result)
        self.assertNotEqual(result["exitCode"], 0, result)
        self.assertEqual(self.config_bytes(), self.config_before)

    def test_a_hook_write_is_denied_and_nothing_planted(self):
        result = self.bash("echo 'touch /tmp/owned' > .git/hooks/pre-commit")
        self.assertEqual(result["kind"], "denied", result)
        self.assertFalse(os.path.exists(os.path.join(self.repo, ".git", "hooks", "pre-commit")))

    def test_ordinary_git_work_is_not_marked(self):
        steps = ["echo more >> README && git add README", "git commit -q -m second", "git branch topic",
                 "git status --short", "git log --oneline", "git checkout -q topic", "git stash list",
                 "git gc -q"]
        for step in steps:
            with self.subTest(step=step):
                result = self.assert_completed(step)
                self.assertEqual(result["exitCode"], 0, result)
        self.assertIn("second", self.host_git("-C", self.repo, "log", "--oneline", "-1"))
        self.assertEqual(self.config_bytes(), self.config_before)


class ToolDescription(unittest.TestCase):
    def test_mcp_bash_description_says_what_is_held_back(self):
        requests = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
                     "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                "clientInfo": {"name": "test", "version": "0"}}},
                    {"jsonrpc": "2.0", "method": "notifications/initialized"},
                    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}]
        os.makedirs(SCRATCH, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=SCRATCH) as root:
            done = subprocess.run([BIN, "mcp", "--mode", "workspace-write", "--root", root],
                                  input="".join(json.dumps(request) + "\n" for request in requests),
                                  capture_output=True, check=False, text=True,
                                  env=dict(os.environ, XDG_STATE_HOME=root + "/.state"))
        answers = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
        tools = next(answer for answer in answers if answer.get("id") == 2)["result"]["tools"]
        description = next(tool for tool in tools if tool["name"] == "bash")["description"]
        for words in (".git/config", ".git/hooks", "held back", "danger-full-access", "ask the user"):
            self.assertIn(words, description)


if __name__ == "__main__":
    sys.exit(run_suite(__name__))
