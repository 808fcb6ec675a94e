# SPDX-License-Identifier: MIT
"""The reach check of the shared ssh connections (issue 24: "a confined local command cannot reach it").

While `--remote` calls share a connection, its master listens on a control socket under
$XDG_RUNTIME_DIR/dsh-sandbox (ssh/%C), and whatever reaches that socket runs commands on the remote
host as the remote user, outside the remote's sandbox.  The check lists every unix socket under
$XDG_RUNTIME_DIR/dsh-sandbox from outside, then runs a confined `dsh-sandbox run` on each backend and
mode that tries, for each socket, a raw connect and `ssh -o ControlPath=SOCK ... touch MARKER` (the
marker in a directory outside every root).  A connect that succeeds or a marker on disk is a hole.

The same probe runs unconfined first: it must connect and leave its marker, else the check could not
see a hole and proves nothing.  Used by bench/floor.bench.sh (this file run as a program) and by
tests/remote/test-control-reach.py.
"""
import os
import stat
import subprocess
import sys

PATIENCE = 120   # an upper bound for one command, never a measurement

# Run as `python3 -c PROBE MARKER_DIR SOCKET...`, confined or not; one line per socket, way and attempt.
# Each socket is tried by its path and by other names for it that a supervisor resolving paths must
# see through: through /proc/1/root and /proc/self/root, with a "/./" in it, by a symlink the command
# makes in its own /tmp (where it has one), and relative to its directory.  ssh's -F /dev/null, Port=1 and BatchMode: when
# the socket cannot be used, ssh's fallback to a fresh connection is refused at once, so only the
# socket can run the command.
PROBE = r"""
import os, socket, subprocess, sys, tempfile
marker_dir = sys.argv[1]
def ways(path):
    found = [("path", path, None), ("proc-1-root", "/proc/1/root" + path, None),
             ("proc-self-root", "/proc/self/root" + path, None),
             ("dot", os.path.join(os.path.dirname(path), ".", os.path.basename(path)), None),
             ("relative", os.path.basename(path), os.path.dirname(path))]
    try:
        link = os.path.join(tempfile.mkdtemp(prefix="r"), "s")
        os.symlink(path, link)
        found.append(("symlink", link, None))
    except OSError:
        print("symlink skipped: nowhere writable")
    return found
def attempt(index, way, name, directory):
    try:
        os.chdir(directory or "/")
    except OSError as error:
        print("chdir %d %s refused %s" % (index, way, error.strerror))
        return
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.connect(name)
        print("connect %d %s ok" % (index, way))
    except OSError as error:
        print("connect %d %s refused %s" % (index, way, error.strerror))
    finally:
        probe.close()
    marker = os.path.join(marker_dir, "marker-%d-%s" % (index, way))
    ssh = subprocess.run(["ssh", "-F", "/dev/null", "-o", "ControlPath=" + name, "-o", "ControlMaster=no",
                          "-o", "BatchMode=yes", "-o", "HostName=127.0.0.1", "-o", "Port=1", "x", "touch", marker],
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
    print("ssh %d %s %d" % (index, way, ssh.returncode))
for index, path in enumerate(sys.argv[2:]):
    for way, name, directory in ways(path):
        attempt(index, way, name, directory)
print("probe done")
"""


def control_sockets(runtime_dir):
    """Every unix socket under RUNTIME_DIR/dsh-sandbox, listed from outside any sandbox."""
    found = []
    for directory, _, names in os.walk(os.path.join(runtime_dir, "dsh-sandbox")):
        found += [os.path.join(directory, name) for name in names
                  if stat.S_ISSOCK(os.lstat(os.path.join(directory, name)).st_mode)]
    return sorted(found)


def run_probe(prefix, marker_dir, sockets, env):
    """Runs PROBE under `prefix` (a `dsh-sandbox run ... --` argv, or [] for unconfined).

    Returns (ran, holes): whether the probe got to its end, and each socket it reached (connected to, or
    left a marker through), judged by its output and on disk."""
    os.makedirs(marker_dir)
    result = subprocess.run(prefix + [sys.executable, "-c", PROBE, marker_dir] + sockets, capture_output=True,
                            text=True, env=env, stdin=subprocess.DEVNULL, timeout=PATIENCE, check=False)
    lines = result.stdout.splitlines()
    holes = []
    for index, path in enumerate(sockets):
        holes += ["connected to %s (%s)" % (path, line.split()[2]) for line in lines
                  if line.startswith("connect %d " % index) and line.endswith(" ok")]
        holes += ["ran `touch` on the remote through %s (%s)" % (path, name.split("-", 2)[2])
                  for name in sorted(os.listdir(marker_dir)) if name.startswith("marker-%d-" % index)]
    ran = "probe done" in lines
    return ran, holes, (result.stdout + result.stderr).strip()


def cases(runtime_dir, workspace, backends):
    """(name, the `run` argv before the probe) for each backend and mode: read-only with a workspace of
    its own, and workspace-write with the runtime directory itself as the root, so that the control
    directory lies inside the command's writable root (the protections must hold there too)."""
    for backend in backends:
        yield (backend + " read-only", ["--backend", backend, "--mode", "read-only", "--root", workspace])
        yield (backend + " workspace-write, root " + runtime_dir,
               ["--backend", backend, "--mode", "workspace-write", "--root", runtime_dir])


def master_answers(control_socket):
    """Whether the master at `control_socket` is up, asked from outside."""
    check = subprocess.run(["ssh", "-F", "/dev/null", "-S", control_socket, "-O", "check", "x"],
                           capture_output=True, timeout=PATIENCE, check=False)
    return check.returncode == 0


def reach_check(tool, runtime_dir, scratch, backends, env):
    """Returns (not_run, holes): reasons the check proves nothing, and every hole it found, as lines."""
    sockets = control_sockets(runtime_dir)
    masters = [path for path in sockets if master_answers(path)]
    if not masters:
        return ["no shared connection answers under %s/dsh-sandbox (sockets: %s)" % (runtime_dir, sockets)], []
    workspace = os.path.join(scratch, "reach-workspace")
    os.makedirs(workspace, exist_ok=True)
    ran, reached, output = run_probe([], os.path.join(scratch, "reach-unconfined"), sockets, env)
    missed = [path for path in masters if "connected to %s (path)" % path not in reached
              or "ran `touch` on the remote through %s (path)" % path not in reached]
    if not ran or missed:
        return ["unconfined, the probe did not reach %s, so it could not see a hole: %s" % (missed, output)], []
    not_run, holes = [], []
    for number, (name, options) in enumerate(cases(runtime_dir, workspace, backends)):
        prefix = [tool, "run"] + options + ["--"]
        ran, reached, output = run_probe(prefix, os.path.join(scratch, "reach-marks-%d" % number), sockets, env)
        holes += ["%s: %s" % (name, hole) for hole in reached]
        if not ran:
            not_run.append("%s: the confined probe did not run to its end: %s" % (name, output))
    for path in masters:
        if not master_answers(path):
            not_run.append("the master at %s went down during the check" % path)
    return not_run, holes


def main(arguments):
    """bench/floor.bench.sh: control_reach.py TOOL RUNTIME_DIR SCRATCH BACKEND...; 0 when every backend
    refused, 1 on a hole (REACHABLE), 2 when the check could not run."""
    tool, runtime_dir, scratch, backends = arguments[0], arguments[1], arguments[2], arguments[3:]
    not_run, holes = reach_check(tool, runtime_dir, scratch, backends, dict(os.environ))
    for hole in holes:
        print("REACHABLE: " + hole)
    for reason in not_run:
        print("reach check NOT RUN: " + reason)
    if holes:
        print("REACHABLE: a confined command reached the shared connection (%d holes)" % len(holes))
        return 1
    if not_run:
        return 2
    print("reach check: refused on every backend (%s; read-only and workspace-write)" % ", ".join(backends))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
