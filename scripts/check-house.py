#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The house check: the source tree keeps the shape docs/architecture.md describes.

Usage: scripts/check-house.py [--root DIR] [--exceptions FILE] [--results FILE.jsonl]

Three checks over the C sources of src/, cli/, service/, tools/ and include/ (tests/, fuzz/ and
bench/ are not part of the house, though fuzz/ and bench/ count for the size limit):

  cycle   no include cycle between modules.  A module is a .c file with its .h (src/provider/spawn.c
          and src/provider/spawn.h are the module src/provider/spawn; a header alone, such as
          src/provider/backend.h, is a module too).  The graph is built from every `#include "..."`
          line; a strongly connected set of modules is printed with one cycle through it and the
          include lines that close it.
  size    no source file over 1,000 lines (.c and .h, tests/ excluded; fuzz/, bench/ and examples/
          included).
  layer   each folder includes only the folders beneath it (LAYERS below, docs/architecture.md), and
          every include resolves under the one include rule: a header of src/ by its path from src/
          ("provider/backend.h"), a header of cli/, service/ or tools/ by its name from its own
          folder (cli/ also reaches service/'s, tools/ src/core/'s by "core/NAME.h"), a public
          header as "dsh-sandbox/NAME.h", and "config.h", the build's own.

What is known and not yet fixed is listed in scripts/house-exceptions.txt, one line each with its
issue number:
  cycle MODULE MODULE... # issue N: why     (the modules of one strongly connected set, any order)
  size PATH LINES # issue N: why            (the file may not grow past LINES)
  layer PATH INCLUDED-PATH # issue N: why   (one include line that goes upwards)
The check fails on anything not listed, on a listed file that grew past its lines, and on a listed
exception that no longer occurs, so that the list only shrinks.

Exit status 0 when every check passes, 1 otherwise, 2 on bad usage or a malformed exceptions file.
With --results, one record per check in the shape of meson's testlog.json (scripts/count-tests.py
counts them).
"""
import argparse
import json
import os
import re
import sys

SIZE_LIMIT = 1000
HOUSE_FOLDERS = ("src", "cli", "service", "tools", "include")
SIZE_FOLDERS = HOUSE_FOLDERS + ("fuzz", "bench", "examples")
GENERATED_HEADERS = {"config.h"}  # meson's configure_file() output, in the build tree
INCLUDE_RULE = {
    "src": 'a header of src/ by its path from src/, e.g. "provider/backend.h"',
    "include": 'a public header includes only "dsh-sandbox/NAME.h": it is installed without the tree',
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)

# What each folder may include, besides itself and the public headers (include/dsh-sandbox/).
# base/ is the ground floor and core/ (libc only, what the launchers link) stands beside it.  policy/
# and the shield stand on base/; the provider on base/, core/ and the shield (its backends apply the
# shield's rules); policy/ and the provider do not include each other: they share the public types
# of sandbox.h and meet in runtime.c, the composition root.  The file guard, the bash tool and remote
# sit on the provider; remote also on the bash tool (its helper runs it, its client reads the
# result).  cli/ and service/ use only the public API of the library; cli/'s serve and mcp commands
# start service/'s front ends (service/ uses none of cli/'s headers); tools/ links core/ only.
LAYERS = {
    "src/base": set(),
    "src/core": set(),
    "src/policy": {"src/base"},
    "src/provider": {"src/base", "src/core", "src/shield", "src/network"},
    "src/network": {"src/base", "src/core"},
    "src/shield": {"src/base"},
    "src/fs": {"src/base", "src/provider", "src/shield"},
    "src/denial": {"src/base", "src/provider", "src/shield", "src/fs"},
    "src/bash": {"src/base", "src/provider", "src/denial"},
    "src/remote": {"src/base", "src/provider", "src/bash"},
    "src": {"src/base", "src/core", "src/policy", "src/provider", "src/shield", "src/fs", "src/bash",
            "src/remote", "src/network", "src/denial"},
    "cli": {"service"},
    "service": set(),
    "tools": {"src/core"},
    "include": set(),  # the installed public headers: nothing of the tree they are installed from
}


class ExceptionsError(Exception):
    pass


def read_exceptions(path):
    """The exceptions file as {(kind, key): (value, line number)}; a malformed line raises ExceptionsError."""
    exceptions = {}
    with open(path, encoding="utf-8") as handle:
        for number, raw in enumerate(handle, 1):
            line, _, comment = raw.partition("#")
            words = line.split()
            if not words:
                continue
            where = f"{path}:{number}"
            if not re.search(r"\bissue \d+", comment):
                raise ExceptionsError(f"{where}: an exception names its issue ('# issue N: why')")
            kind, args = words[0], words[1:]
            if kind == "cycle" and len(args) >= 2:
                key, value = frozenset(args), None
            elif kind == "size" and len(args) == 2 and args[1].isdigit():
                key, value = args[0], int(args[1])
            elif kind == "layer" and len(args) == 2:
                key, value = (args[0], args[1]), None
            else:
                raise ExceptionsError(f"{where}: expected 'cycle MODULE MODULE...', 'size PATH LINES' or "
                                      f"'layer PATH INCLUDED-PATH', got {line.strip()!r}")
            if (kind, key) in exceptions:
                raise ExceptionsError(f"{where}: listed twice: {line.strip()!r}")
            exceptions[(kind, key)] = (value, number)
    return exceptions


def source_files(root, folders):
    """Every .c and .h file under the folders, as paths relative to root, sorted."""
    found = []
    for folder in folders:
        for directory, subdirs, names in os.walk(os.path.join(root, folder)):
            subdirs.sort()
            for name in names:
                if name.endswith((".c", ".h")):
                    found.append(os.path.relpath(os.path.join(directory, name), root))
    return sorted(found)


def folder_of(path):
    """The house folder a file belongs to: src/provider for src/provider/spawn.c, src for src/runtime.c."""
    parts = path.split(os.sep)
    if parts[0] == "src" and len(parts) > 2:
        return "/".join(parts[:2])
    return parts[0]


def resolve(root, path, included):
    """The file an include line names under the include rule, relative to root; None if it names none."""
    top = path.split(os.sep)[0]
    if top == "src":
        candidates = [os.path.join("src", included)]
    elif top == "tools":
        candidates = [os.path.join("tools", included), os.path.join("src", included)]
    elif top == "cli":
        candidates = [os.path.join("cli", included), os.path.join("service", included)]
    else:
        candidates = [os.path.join(top, included)]
    candidates.append(os.path.join("include", included))
    for candidate in candidates:
        if os.path.isfile(os.path.join(root, candidate)):
            return os.path.normpath(candidate)
    return None


def module_of(path):
    return os.path.splitext(path)[0]


def include_graph(root, files, problems):
    """{module: {included module: (file, included text, line number)}}; unresolved includes go to problems."""
    graph = {module_of(path): {} for path in files}
    for path in files:
        with open(os.path.join(root, path), encoding="utf-8") as handle:
            text = handle.read()
        for match in INCLUDE.finditer(text):
            included = match.group(1)
            line = text.count("\n", 0, match.start()) + 1
            if included in GENERATED_HEADERS:
                continue
            target = resolve(root, path, included)
            if target is None:
                problems.append(f"{path}:{line}: #include \"{included}\" names no file under the include rule "
                                f"({INCLUDE_RULE.get(path.split(os.sep)[0], INCLUDE_RULE['src'])})")
                continue
            source, destination = module_of(path), module_of(target)
            if destination != source:
                graph.setdefault(destination, {})
                graph[source].setdefault(destination, (path, included, line))
    return graph


def strongly_connected(graph):
    """Tarjan's strongly connected sets of more than one module, each sorted, iteratively (no recursion limit)."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            advanced = False
            for successor in edges:
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(graph[successor]))))
                    advanced = True
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                members = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    members.append(member)
                    if member == node:
                        break
                if len(members) > 1:
                    found.append(sorted(members))
    return sorted(found)


def one_cycle(graph, members):
    """A shortest cycle through the set's first module, as the list of modules from it back to it."""
    start, inside = members[0], set(members)
    previous, frontier = {start: None}, [start]
    while frontier:
        following = []
        for node in frontier:
            for successor in sorted(graph[node]):
                if successor == start:
                    path = [node]
                    while previous[path[-1]] is not None:
                        path.append(previous[path[-1]])
                    return list(reversed(path)) + [start]
                if successor in inside and successor not in previous:
                    previous[successor] = node
                    following.append(successor)
        frontier = following
    return [start, start]


def check_cycles(graph, exceptions, report):
    failures = []
    sets = strongly_connected(graph)
    for members in sets:
        cycle = one_cycle(graph, members)
        listed = ("cycle", frozenset(members)) in exceptions
        report(f"  cycle {' '.join(members)}: {'listed' if listed else 'NOT LISTED'}")
        if listed:
            continue
        failures.append(f"include cycle: {' -> '.join(cycle)}")
        for source, destination in zip(cycle, cycle[1:]):
            path, included, line = graph[source][destination]
            failures.append(f"    {path}:{line}: #include \"{included}\"")
    present = {frozenset(members) for members in sets}
    for (kind, key), (_, number) in sorted(exceptions.items(), key=lambda item: item[1][1]):
        if kind == "cycle" and key not in present:
            failures.append(f"house-exceptions.txt:{number}: the cycle {' '.join(sorted(key))} is gone: "
                            "delete its line")
    edges = sum(len(targets) for targets in graph.values())
    report(f"cycle: {len(graph)} modules, {edges} include edges, {len(sets)} strongly connected sets")
    return failures


def check_sizes(root, exceptions, report):
    failures = []
    files = source_files(root, SIZE_FOLDERS)
    oversized = {}
    for path in files:
        with open(os.path.join(root, path), encoding="utf-8") as handle:
            lines = sum(1 for _ in handle)
        if lines > SIZE_LIMIT:
            oversized[path] = lines
    for path, lines in oversized.items():
        listed = exceptions.get(("size", path))
        report(f"  size {path} {lines}: {'listed at ' + str(listed[0]) if listed else 'NOT LISTED'}")
        if listed is None:
            failures.append(f"{path}: {lines} lines, over the limit of {SIZE_LIMIT}: split it along its seams")
        elif lines > listed[0]:
            failures.append(f"{path}: {lines} lines, grown past the {listed[0]} its exception allows "
                            f"(house-exceptions.txt:{listed[1]})")
    for (kind, key), (_, number) in sorted(exceptions.items(), key=lambda item: item[1][1]):
        if kind == "size" and key not in oversized:
            failures.append(f"house-exceptions.txt:{number}: {key} is no longer over {SIZE_LIMIT} lines "
                            "(or no longer exists): delete its line")
    report(f"size: {len(files)} files, {len(oversized)} over {SIZE_LIMIT} lines")
    return failures


def check_layers(root, files, graph, unresolved, exceptions, report):
    failures = list(unresolved)
    upward = set()
    checked = 0
    for path in files:
        folder = folder_of(path)
        allowed = LAYERS.get(folder)
        if allowed is None:
            failures.append(f"{path}: the folder {folder} has no place in scripts/check-house.py's LAYERS "
                            "(and docs/architecture.md): give it one")
            continue
        for destination, (source_path, included, line) in graph[module_of(path)].items():
            if source_path != path:
                continue
            checked += 1
            target_folder = folder_of(destination)
            if target_folder in (folder, "include") or target_folder in allowed:
                continue
            target = resolve(root, path, included)
            upward.add((path, target))
            if ("layer", (path, target)) in exceptions:
                report(f"  layer {path} {target}: listed")
                continue
            failures.append(f"{path}:{line}: #include \"{included}\": {folder}/ may not include {target_folder}/ "
                            "(docs/architecture.md, the layering)")
    for (kind, key), (_, number) in sorted(exceptions.items(), key=lambda item: item[1][1]):
        if kind == "layer" and key not in upward:
            failures.append(f"house-exceptions.txt:{number}: {key[0]} no longer includes {key[1]}: delete its line")
    report(f"layer: {checked} include edges across {len(LAYERS)} folders, {len(upward)} upward")
    return failures


def main():
    parser = argparse.ArgumentParser(description="The house check (docs/architecture.md).")
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("--root", default=os.path.dirname(here), help="the source tree (default: this checkout)")
    parser.add_argument("--exceptions", help="the allow-list (default: ROOT/scripts/house-exceptions.txt)")
    parser.add_argument("--results", help="append one meson-testlog-shaped record per check to this file")
    options = parser.parse_args()
    root = options.root
    exceptions_path = options.exceptions or os.path.join(root, "scripts", "house-exceptions.txt")
    for folder in HOUSE_FOLDERS:
        if not os.path.isdir(os.path.join(root, folder)):
            print(f"check-house: {root} is not the source tree: it has no {folder}/", file=sys.stderr)
            return 2
    try:
        exceptions = read_exceptions(exceptions_path)
    except (OSError, ExceptionsError) as error:
        print(f"check-house: {error}", file=sys.stderr)
        return 2

    files = source_files(root, HOUSE_FOLDERS)
    unresolved = []
    graph = include_graph(root, files, unresolved)
    outcomes = [
        ("cycle", check_cycles(graph, exceptions, print)),
        ("size", check_sizes(root, exceptions, print)),
        ("layer", check_layers(root, files, graph, unresolved, exceptions, print)),
    ]
    status = 0
    for name, failures in outcomes:
        for failure in failures:
            print(f"check-house: {name}: {failure}")
        print(f"check-house: {name}: {'FAIL' if failures else 'OK'}")
        if failures:
            status = 1
    if options.results:
        with open(options.results, "a", encoding="utf-8") as handle:
            for name, failures in outcomes:
                handle.write(json.dumps({"name": f"house-{name}", "result": "FAIL" if failures else "OK"}) + "\n")
    return status


if __name__ == "__main__":
    sys.exit(main())
