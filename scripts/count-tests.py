#!/usr/bin/env python3
"""Prints 'N passed, N failed, N skipped' over the cmocka cases (and TAP cases) in meson test logs.

Python unittest cases (tests/service/*.py run verbose on stdout) count one per case: a line
"test_name (module.Class.test_name) ... ok|skipped ...|FAIL|ERROR" (a case with subtests ends its
line with "... " and lists them on indented lines: skipped when every one was, else failed, since
unittest prints a case whose subtests all passed as "ok").
A record without cmocka or unittest output counts as one case: a test program that does not use
cmocka, or one fuzz target of scripts/fuzz.sh (its fuzz-results.jsonl has the same shape).
"""
import json
import re
import sys

passed = failed = skipped = 0
for log in sys.argv[1:]:
    with open(log, encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            output = record.get("stdout") or ""
            cases_ok = len(re.findall(r"^\[       OK \] ", output, re.M))
            cases_failed = len(re.findall(r"^\[  FAILED  \] (?!\d+ test)(?!.*listed below)", output, re.M))
            cases_skipped = len(re.findall(r"^\[  SKIPPED \] (?!\d+ test)", output, re.M))
            # TAP (the node:test programs): one top-level "ok N" / "not ok N" line per case.
            cases_skipped += len(re.findall(r"^ok \d+ .*# SKIP", output, re.M))
            cases_ok += len(re.findall(r"^ok \d+ (?!.*# SKIP)", output, re.M))
            cases_failed += len(re.findall(r"^not ok \d+ ", output, re.M))
            for status, subtests in re.findall(r"^test\w+ \([\w.]+\) \.\.\. ?(.*)$((?:\n  test\w+ .*)*)", output,
                                                re.M):
                # A case with subtests ends its own line with "... " and reports each on an indented line:
                # skipped when every one was, failed when any failed.
                if not status and subtests:
                    outcomes = re.findall(r"\.\.\. ?(\S*)", subtests)
                    status = "skipped" if outcomes and all(o.startswith("skipped") for o in outcomes) else ""
                if status.startswith("ok"):
                    cases_ok += 1
                elif status.startswith("skipped"):
                    cases_skipped += 1
                else:
                    cases_failed += 1
            if cases_ok + cases_failed + cases_skipped == 0:
                # A program without cmocka output counts as one case.
                if record.get("result") == "OK":
                    cases_ok = 1
                elif record.get("result") == "SKIP":
                    cases_skipped = 1
                else:
                    cases_failed = 1
            elif record.get("result") not in ("OK", "SKIP") and cases_failed == 0:
                cases_failed = 1  # crashed or timed out after its last printed case
            passed += cases_ok
            failed += cases_failed
            skipped += cases_skipped
print(f"{passed} passed, {failed} failed, {skipped} skipped")
