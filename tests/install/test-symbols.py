#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The shared library exports its public API and nothing else.

Usage: test-symbols.py LIBRARY SOURCE_ROOT

Lists the dynamic symbols LIBRARY defines (nm -D --defined-only) and fails on
any that does not start with dsh_, on any that a header of src/ declares
DSH_INTERNAL (a module's function made visible by mistake still starts with
dsh_), and on any that no header of include/dsh-sandbox/ declares DSH_PUBLIC.
-fvisibility=hidden is what keeps the rest in; this test is what notices
when something gets out.  In a sanitizer build, ASan's ODR indicator of an
exported global (__odr_asan.NAME) is judged as NAME.
"""
import pathlib
import re
import subprocess
import sys

# The declared name: the last identifier before the parameter list, the array bound or the semicolon.
DECLARED_NAME = re.compile(r"\b(dsh_\w+)\s*(?:\(|\[|;)")
ASAN_ODR_INDICATOR = "__odr_asan."


def declared(headers, marker):
    """Names declared with `marker` (DSH_PUBLIC, DSH_INTERNAL) in `headers`."""
    names = set()
    for header in headers:
        text = header.read_text(encoding="utf-8")
        for match in re.finditer(r"\b" + marker + r"\b", text):
            if text[: match.start()].rstrip().endswith("#define"):
                continue
            statement = text[match.end():]
            end = min(i for i in (statement.find("("), statement.find(";"), len(statement)) if i >= 0)
            name = DECLARED_NAME.search(statement[: end + 1])
            if name:
                names.add(name.group(1))
    return names


def exported(library):
    output = subprocess.run(["nm", "-D", "--defined-only", library], check=True, capture_output=True,
                            text=True).stdout
    return {line.split()[-1].split("@")[0] for line in output.splitlines() if line.strip()}


def main():
    library, source_root = sys.argv[1], pathlib.Path(sys.argv[2])
    public = declared(sorted((source_root / "include" / "dsh-sandbox").glob("*.h")), "DSH_PUBLIC")
    internal = declared(sorted((source_root / "src").rglob("*.h")), "DSH_INTERNAL")
    symbols = exported(library)
    failures = []

    if not public or not internal:
        failures.append(f"no declarations found (DSH_PUBLIC: {len(public)}, DSH_INTERNAL: {len(internal)})")
    for symbol in sorted(symbols):
        # ASan's ODR indicator for an exported global (sanitizer builds) stands or falls with the global.
        name = symbol.removeprefix(ASAN_ODR_INDICATOR)
        if not name.startswith("dsh_"):
            failures.append(f"exported without the dsh_ prefix: {symbol}")
        elif name in internal:
            failures.append(f"exported but declared DSH_INTERNAL: {name}")
        elif name not in public:
            failures.append(f"exported but not declared DSH_PUBLIC in include/dsh-sandbox/: {name}")
    # Not vacuous: the entry points every embedding program calls are there.
    for name in ("dsh_provider_new", "dsh_provider_spawn", "dsh_child_wait", "dsh_mode_parse"):
        if name not in symbols:
            failures.append(f"not exported: {name}")

    print(f"{len(symbols)} symbols exported, {len(public)} declared DSH_PUBLIC, {len(internal)} DSH_INTERNAL")
    for failure in failures:
        print(f"FAIL: {failure}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
