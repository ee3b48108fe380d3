#!/usr/bin/env python3
"""Lists import circles between the modules of each crate (`crate::a` used in b and `crate::b` in a,
or longer rings), test modules left out. Usage: scripts/module_cycles.py [crates/]"""
import re
import sys
from pathlib import Path


def product_code(text):
    """The file without its `#[cfg(test)]` module and comments."""
    cut = text.find("#[cfg(test)]")
    if cut >= 0:
        text = text[:cut]
    return "\n".join(line.split("//")[0] for line in text.splitlines())


def graph(src):
    modules = {p.stem: p for p in src.glob("*.rs") if p.stem not in ("lib", "main")}
    edges = {}
    for name, path in modules.items():
        used = set(re.findall(r"crate::(\w+)", product_code(path.read_text())))
        edges[name] = {m for m in used if m in modules and m != name}
    return edges


def cycles(edges):
    found, seen = [], set()

    def walk(node, path):
        for nxt in sorted(edges.get(node, ())):
            if nxt == path[0]:
                ring = tuple(path)
                key = frozenset(ring)
                if key not in seen:
                    seen.add(key)
                    found.append(ring)
            elif nxt not in path and nxt > path[0]:
                walk(nxt, path + [nxt])

    for start in sorted(edges):
        walk(start, [start])
    return found


def main():
    root = Path(sys.argv[1] if len(sys.argv) > 1 else "crates")
    total = 0
    for src in sorted(root.glob("*/src")):
        for ring in cycles(graph(src)):
            total += 1
            print(f"{src.parent.name}: {' -> '.join(ring + (ring[0],))}")
    print(f"{total} import circle(s)")


if __name__ == "__main__":
    main()
