#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The probe's confinement proof cannot be raced (issue 19, item 7), judged on the verdict cache file.

The proof is a write a confined shell must not be able to make.  Today's attacker is a leftover of an
earlier confined call, or anything else that writes where the proof is judged; here it is modelled by
runners that plant files where the proof looks (the strongest racer: it runs between the proof's
setup and its judgement every time), by a real leftover of a Landlock call planting in a loop, and by
runners that really do not confine.  Each case runs the built `dsh-sandbox probe` ($DSH_SANDBOX_BIN)
with a cache, HOME and config of its own, and reads the verdict cache file it left (or did not).

Output is unittest's verbose form, one line per case, then "N passed, N failed, N skipped".
"""
import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "livability"))
from livability import BIN, SCRATCH, bwrap_works, landlock_abi, run_suite  # noqa: E402

PATIENCE = 120   # an upper bound for one command, never a measurement
BWRAP_WORKS = bwrap_works()

# Plants where a proof is judged: today's proof names its target in the argv (/tmp/dsh-sandbox-probe.*/escaped);
# a proof directory (…/probe-*) gets every name a racer could think of.  Then it is the real bwrap.
PLANTING_BWRAP = r"""#!/bin/bash
for word in "$@"; do
  case "$word" in
    */dsh-sandbox-probe.*/escaped) echo planted > "$word";;
    */probe-*) if [ -d "$word" ]; then
                 for name in escaped proof secret nonce 0 00000000000000000000000000000000; do
                   echo planted > "$word/$name"
                 done
               fi;;
  esac
done
exec /usr/bin/bwrap "$@"
"""

# Learns the secret (it is the runner: the proof's stdin passes through it) and writes something else under
# its name: a racer that knows what only the probe's command should know.
RACING_BWRAP = r"""#!/bin/bash
proof="${@: -1}"
case "$proof" in
  */probe-*) IFS= read -r name
             [ -n "$name" ] && echo "not the secret" > "$proof/$name"
             exec /usr/bin/bwrap "$@" < /dev/null;;
esac
exec /usr/bin/bwrap "$@"
"""

# Confines nothing: skips to `--` and execs the command; logs each proof it runs.
PASSTHROUGH_BWRAP = r"""#!/bin/bash
proof="${@: -1}"
case "$proof" in */probe-*) echo "$proof" >> "$(dirname "$0")/proofs.log";; esac
%(first_only)s
fd=''
while [ $# -gt 0 ]; do
  case "$1" in
    --json-status-fd) fd=$2; shift 2;;
    --) shift; break;;
    *) shift;;
  esac
done
[ -n "$fd" ] && eval "echo '{ \"child-pid\": 1 }' >&$fd"
exec "$@" %(stdin)s
"""
# Escapes on the first proof only, then is the real bwrap.
FIRST_ONLY = r"""case "$proof" in */probe-*) [ "$(wc -l < "$(dirname "$0")/proofs.log")" -gt 1 ] && exec /usr/bin/bwrap "$@";; esac"""

# A leftover of a Landlock workspace-write call: plants `escaped` in every proof directory it can see, today's
# in /tmp and the new one in the sandbox's cache, and tries the cache itself, until told to stop.
PLANTER = r"""
import glob, os, sys
cache, stop, log = sys.argv[1], sys.argv[2], sys.argv[3]
with open(log, "w") as out:
    out.write(f"{os.getpid()}\n")
    out.flush()
    planted = set()
    while not os.path.exists(stop):
        for directory in glob.glob("/tmp/dsh-sandbox-probe.*") + glob.glob(cache + "/probe-*") + [cache]:
            try:
                with open(os.path.join(directory, "escaped"), "w") as target:
                    target.write("planted\n")
                if directory not in planted:
                    planted.add(directory)
                    out.write(f"planted {directory}\n")
                    out.flush()
            except OSError:
                pass
"""


class ProbeCase(unittest.TestCase):
    def setUp(self):
        if not BWRAP_WORKS:
            self.skipTest("bwrap cannot make a sandbox on this host")
        if landlock_abi() == 0:
            self.skipTest("the kernel has no Landlock: the chain has nothing to fall back to")
        os.makedirs(SCRATCH, exist_ok=True)
        self.top = tempfile.mkdtemp(prefix="reach-probe-", dir=SCRATCH)
        self.cache_home = os.path.join(self.top, "cache")
        self.cache = os.path.join(self.cache_home, "dsh-sandbox")
        self.home = os.path.join(self.top, "home")
        self.bin = os.path.join(self.top, "bin")
        for directory in (self.home, self.bin):
            os.makedirs(directory)
        self.config = os.path.join(self.top, "config.json")
        with open(self.config, "w") as config:
            config.write("{}")

    def tearDown(self):
        shutil.rmtree(self.top, ignore_errors=True)

    def runner(self, name, text):
        path = os.path.join(self.bin, name)
        with open(path, "w") as script:
            script.write(text)
        os.chmod(path, 0o755)
        return path

    def dsh(self, *arguments, bwrap=None):
        environment = dict(os.environ, HOME=self.home, XDG_CACHE_HOME=self.cache_home,
                           DSH_SANDBOX_CONFIG=self.config)
        environment.pop("XDG_RUNTIME_DIR", None)
        if bwrap:
            environment["DSH_SANDBOX_BWRAP"] = bwrap
        return subprocess.run([BIN, *arguments], capture_output=True, text=True, env=environment,
                              stdin=subprocess.DEVNULL, timeout=PATIENCE, check=False)

    def probe(self, bwrap=None):
        result = self.dsh("probe", bwrap=bwrap)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        return result.stdout

    def cached_selection(self):
        """The backend the verdict cache file selects, or None when no verdict was persisted."""
        files = glob.glob(os.path.join(self.cache, "verdict-*.json"))
        if not files:
            return None
        self.assertEqual(len(files), 1, files)
        with open(files[0]) as verdict:
            return json.load(verdict)["selected"]

    def proofs(self):
        path = os.path.join(self.bin, "proofs.log")
        if not os.path.exists(path):
            return []
        with open(path) as log:
            return log.read().split()

    def test_planted_names_where_the_proof_looks_change_nothing(self):
        report = self.probe(self.runner("bwrap", PLANTING_BWRAP))
        self.assertNotIn("could still write outside", report)
        self.assertIn("auto selects    bwrap", report)
        self.assertIn("found entries it did not make", report)
        # A disturbed proof is used, never persisted.
        self.assertIsNone(self.cached_selection())
        # Nothing the probe made is left behind.
        self.assertEqual(glob.glob(os.path.join(self.cache, "probe-*")), [])

    def test_a_leftover_planting_in_a_loop_changes_nothing(self):
        workspace = os.path.join(self.top, "ws")
        os.makedirs(workspace)
        planter = os.path.join(workspace, "planter.py")
        with open(planter, "w") as script:
            script.write(PLANTER)
        stop, log = os.path.join(workspace, "stop"), os.path.join(workspace, "planter.log")
        start = self.dsh("run", "--backend", "landlock", "--mode", "workspace-write", "--root", workspace, "--",
                         "sh", "-c", f"setsid {sys.executable} {planter} {self.cache} {stop} {log} "
                                     "</dev/null >/dev/null 2>&1 & sleep 0")
        self.assertEqual(start.returncode, 0, start.stderr)
        try:
            for attempt in range(5):
                report = self.probe()
                self.assertNotIn("could still write outside", report, f"probe {attempt}")
                self.assertIn("auto selects    bwrap", report, f"probe {attempt}")
                self.assertEqual(self.cached_selection(), "bwrap", f"probe {attempt}")
            self.assertFalse(os.path.exists(os.path.join(self.cache, "escaped")),
                             "a Landlock leftover wrote the sandbox's cache")
        finally:
            with open(stop, "w"):
                pass
            self.stop_planter(log)

    def stop_planter(self, log):
        """Ends the leftover this case started (by its pid; it also stops on its own at the stop file)."""
        try:
            with open(log) as lines:
                pid = int(lines.readline())
        except (OSError, ValueError):
            return   # it never ran (a backend that ends leftovers with their call): nothing to stop
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def test_a_genuine_escape_is_proved_twice_then_persisted(self):
        report = self.probe(self.runner("bwrap", PASSTHROUGH_BWRAP % {"first_only": "", "stdin": ""}))
        self.assertIn("could still write outside its policy on this host (proved twice)", report)
        self.assertIn("auto selects    landlock", report)
        proofs = self.proofs()
        self.assertEqual(len(proofs), 2, proofs)
        self.assertNotEqual(proofs[0], proofs[1], "the second run had a directory of its own")
        self.assertEqual(self.cached_selection(), "landlock")

    def test_an_escape_a_second_run_does_not_confirm_is_not_persisted(self):
        report = self.probe(self.runner("bwrap", PASSTHROUGH_BWRAP % {"first_only": FIRST_ONLY, "stdin": ""}))
        self.assertIn("wrote outside its policy once but not on a second run", report)
        self.assertIn("auto selects    landlock", report)   # passed over for now: it escaped once
        self.assertEqual(len(self.proofs()), 2)
        self.assertIsNone(self.cached_selection())

    def test_a_runner_that_swallows_stdin_proves_nothing(self):
        # Confines nothing and hands the command /dev/null: the secret's file never appears, because the
        # command never learnt its name.  A missing file is no proof without the command's word that it read.
        report = self.probe(self.runner("bwrap", PASSTHROUGH_BWRAP % {"first_only": "", "stdin": "< /dev/null"}))
        self.assertIn("never read its secret on stdin", report)
        self.assertIn("auto selects    landlock", report)
        self.assertIsNone(self.cached_selection())

    def test_a_raced_proof_concludes_nothing_and_is_not_persisted(self):
        report = self.probe(self.runner("bwrap", RACING_BWRAP))
        self.assertIn("the confinement proof under bwrap was raced", report)
        self.assertNotIn("could still write outside", report)
        self.assertIsNone(self.cached_selection())
        # The next probe, with nobody racing it, decides afresh and persists bwrap.
        self.assertIn("auto selects    bwrap", self.probe())
        self.assertEqual(self.cached_selection(), "bwrap")


if __name__ == "__main__":
    sys.exit(run_suite(__name__))
