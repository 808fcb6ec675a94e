# SPDX-License-Identifier: MIT
"""What every livability suite shares: which backends this host has, and the one way a suite runs.

Each suite is a real client of the built tool ($DSH_SANDBOX_BIN) under the real kernel and tools,
printing unittest's verbose form (one line per case), a "# SKIP: case: reason" line for each skip,
then "N passed, N failed, N skipped".
"""
import ctypes
import json
import os
import subprocess
import sys
import unittest

BIN = os.environ.get("DSH_SANDBOX_BIN", "")
SCRATCH = os.environ.get("DSH_TEST_SCRATCH", "/var/tmp/dsh-sandbox-tests")


def bwrap_works():
    """Whether bwrap can make a sandbox on this host (a fresh pid namespace and /proc)."""
    if not os.path.exists("/usr/bin/bwrap"):
        return False
    probe = subprocess.run(["/usr/bin/bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--unshare-pid", "--proc",
                            "/proc", "--", "true"], capture_output=True, check=False)
    return probe.returncode == 0


def landlock_abi():
    """The kernel's Landlock ABI (0 when there is none), asked the way the sandbox asks."""
    libc = ctypes.CDLL(None, use_errno=True)
    abi = libc.syscall(444, None, ctypes.c_size_t(0), ctypes.c_uint32(1))  # LANDLOCK_CREATE_RULESET_VERSION
    return abi if abi > 0 else 0


def run_suite(module_name):
    """Runs the unittest cases of `module_name` verbosely; returns the exit status for sys.exit."""
    if not BIN or not os.access(BIN, os.X_OK):
        print(f"DSH_SANDBOX_BIN is not an executable: {BIN!r}")
        return 1
    runner = unittest.TextTestRunner(stream=sys.stdout, verbosity=2, descriptions=False)
    outcome = unittest.main(module=module_name, testRunner=runner, exit=False, argv=sys.argv[:1]).result
    # A case whose subtests failed is one failed case (the subtests' failures are listed one by one).
    failed = len({getattr(case, "test_case", case).id() for case, _ in outcome.failures + outcome.errors})
    skipped = len(outcome.skipped)
    for case, reason in outcome.skipped:
        print(f"# SKIP: {case.id()}: {reason}")
    print(f"{outcome.testsRun - failed - skipped} passed, {failed} failed, {skipped} skipped")
    return 0 if outcome.wasSuccessful() else 1


def serve_results(case, requests, env, cwd, patience=120):
    """One `dsh-sandbox serve`, `requests` ((method, params) pairs; params may be a function of the
    answers so far) answered in order; the results by id.  `case` asserts each answer and a clean end."""
    server = subprocess.Popen([BIN, "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, cwd=cwd, env=env)
    answers = {}
    try:
        for number, (method, params) in enumerate(requests, start=1):
            if callable(params):
                params = params(answers)
            server.stdin.write(json.dumps({"jsonrpc": "2.0", "id": number, "method": method,
                                           "params": params}) + "\n")
            server.stdin.flush()
            message = json.loads(server.stdout.readline())
            case.assertEqual(message.get("id"), number, message)
            case.assertIn("result", message, message)
            answers[number] = message["result"]
    finally:
        server.stdin.close()
        status = server.wait(timeout=patience)
        log = server.stderr.read()
        server.stdout.close()
        server.stderr.close()
    case.assertEqual((status, log), (0, ""))
    return answers


def mcp_results(case, options, requests, env, patience=120):
    """`dsh-sandbox mcp OPTIONS...` initialized, then `requests` (ids from 2); the results by id."""
    opening = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                           "clientInfo": {"name": "test", "version": "0"}}},
               {"jsonrpc": "2.0", "method": "notifications/initialized"}]
    wanted = {request["id"] for request in requests}
    server = subprocess.Popen([BIN, "mcp", *options], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True, env=env)
    answers = {}
    try:
        # The end of input cancels what still runs: stdin stays open until every answer came.
        server.stdin.write("".join(json.dumps(request) + "\n" for request in opening + requests))
        server.stdin.flush()
        for line in server.stdout:
            message = json.loads(line)
            if message.get("id") in wanted:
                answers[message["id"]] = message["result"]
            if set(answers) == wanted:
                break
    finally:
        server.stdin.close()
        server.wait(timeout=patience)
        server.stdout.close()
    case.assertEqual(set(answers), wanted, "the server ended without answering every call")
    return answers
