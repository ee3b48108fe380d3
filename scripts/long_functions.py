#!/usr/bin/env python3
"""Lists the product functions (not tests) of the workspace longer than a limit, longest first.

A function's length is its lines from the `fn` line to its closing brace, both included. Test code
is left out: files under a `tests/` or `benches/` directory, `#[cfg(test)]` modules, `#[test]`
functions. Usage: scripts/long_functions.py [--over N] [DIR]   (default: 80 lines, crates/)
"""
import re
import sys
from pathlib import Path

FN = re.compile(r"^\s*(pub(\([^)]*\))?\s+)?(const\s+)?(async\s+)?(unsafe\s+)?(extern\s+\"[^\"]*\"\s+)?fn\s+(\w+)")
IMPL = re.compile(r"^\s*impl(<[^>]*>)?\s+(?:[\w:<>, ]+\s+for\s+)?([\w:]+)")


def strip(line):
    """The line without string literals, char literals and comments (enough to count braces)."""
    line = re.sub(r'r#*"[^"]*"#*', '""', line)
    line = re.sub(r'"(\\.|[^"\\])*"', '""', line)
    line = re.sub(r"'(\\.|[^'\\])'", "''", line)
    return line.split("//")[0]


def functions(path):
    lines = path.read_text(encoding="utf-8").splitlines()
    depth = 0
    skip_until = None  # depth at which a test module or test function ends
    pending_test = False
    impl_stack = []  # (depth, name)
    open_fns = []  # (depth, name, start)
    in_string = False
    for number, raw in enumerate(lines, 1):
        text = raw
        # Multi-line string literals: ignore their content.
        if in_string:
            if text.count('"') % 2 == 1:
                in_string = False
                text = text[text.index('"') + 1:]
            else:
                continue
        code = strip(text)
        if code.count('"') % 2 == 1:
            in_string = True
            code = code[: code.rindex('"')]
        stripped = code.strip()
        if skip_until is None:
            if stripped.startswith("#[cfg(test)]") or stripped.startswith("#[test]"):
                pending_test = True
            m = FN.match(code)
            if m and not pending_test:
                owner = impl_stack[-1][1] if impl_stack else None
                name = f"{owner}::{m.group(7)}" if owner else m.group(7)
                if "{" in code or not code.rstrip().endswith(";"):
                    open_fns.append((depth, name, number))
            i = IMPL.match(code)
            if i and not pending_test:
                impl_stack.append((depth, i.group(2).split("::")[-1]))
        opened = code.count("{")
        closed = code.count("}")
        if pending_test and opened > 0 and skip_until is None:
            skip_until = depth
            pending_test = False
        depth += opened - closed
        if skip_until is not None and depth <= skip_until:
            skip_until = None
        while open_fns and depth <= open_fns[-1][0] and closed:
            d, name, start = open_fns.pop()
            yield name, start, number - start + 1
        while impl_stack and depth <= impl_stack[-1][0] and closed:
            impl_stack.pop()


def main():
    args = sys.argv[1:]
    over = 80
    if args[:1] == ["--over"]:
        over = int(args[1])
        args = args[2:]
    root = Path(args[0] if args else "crates")
    found = []
    for path in sorted(root.rglob("*.rs")):
        parts = set(path.parts)
        if "tests" in parts or "benches" in parts or "target" in parts:
            continue
        for name, start, length in functions(path):
            if length > over:
                found.append((length, f"{path}:{start}", name))
    found.sort(reverse=True)
    for length, place, name in found:
        print(f"{length:5}  {name:40} {place}")
    over_120 = sum(1 for f in found if f[0] > 120)
    print(f"{len(found)} product functions over {over} lines, {over_120} over 120")


if __name__ == "__main__":
    main()
