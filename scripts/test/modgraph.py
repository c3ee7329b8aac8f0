#!/usr/bin/env python3
"""Print a crate's module import graph (schedlab-core's by default, any
crate's with --src) and fail on an import circle.

A module is one source file (`foo.rs` or `foo/mod.rs`). An edge A -> B means
A's code names a path inside B: `use crate::b::...`, `crate::b::x` anywhere
in the code, or `super::...` resolved against A's place in the tree. Names
that resolve only to a parent folder (`crate::fair`) point at its mod.rs.
`mod x;` declarations are the tree itself, not imports, and a module's own
`#[cfg(test)] mod tests` file is part of it.

Usage: scripts/test/modgraph.py [--src DIR] [--dot] [--quiet]
Exit status 1 when a circle (a strongly connected set of 2+ modules) exists.
"""
import argparse
import os
import re
import sys

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"


def module_files(src):
    """Map module path tuple -> file path."""
    mods = {}
    for root, _dirs, files in os.walk(src):
        for f in files:
            if not f.endswith(".rs"):
                continue
            path = os.path.join(root, f)
            rel = os.path.relpath(path, src)[:-3].split(os.sep)
            if rel == ["lib"]:
                key = ()
            elif rel[-1] == "mod":
                key = tuple(rel[:-1])
            else:
                key = tuple(rel)
            mods[key] = path
    return mods


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r'"(?:\\.|[^"\\])*"', '""', text)
    return text


def test_files(mods):
    """Files that are only `#[cfg(test)] mod NAME;` children: folded into parent."""
    folded = {}
    for key, path in mods.items():
        text = open(path, encoding="utf-8").read()
        for m in re.finditer(r"#\[cfg\(test\)\]\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(" + IDENT + r")\s*;", text):
            child = key + (m.group(1),)
            if child in mods:
                folded[child] = key
    return folded


def resolve(mods, segs):
    """Longest prefix of segs that is a module."""
    for n in range(len(segs), 0, -1):
        if tuple(segs[:n]) in mods:
            return tuple(segs[:n])
    return None


def inline_mod_spans(text):
    """(start, end) of inline `mod name { ... }` blocks (e.g. `mod tests`),
    where `super` names the file's own module, not its parent."""
    spans = []
    for m in re.finditer(r"\bmod\s+" + IDENT + r"\s*\{", text):
        depth, i = 1, m.end()
        while i < len(text) and depth:
            if text[i] == "{":
                depth += 1
            elif text[i] == "}":
                depth -= 1
            i += 1
        spans.append((m.start(), i))
    return spans


def edges_of(mods, key, text, is_mod_rs):
    out = set()
    inline = inline_mod_spans(text)
    # `crate::a::b`, `super::a`, `super::*`, and groups `use crate::a::{b,
    # c::d}` / `use super::{x, y}`: each brace member is a path continuing
    # the prefix (first level only).
    for m in re.finditer(r"\b(crate|super)((?:::" + IDENT + r")*)(::\{([^{}]*(?:\{[^{}]*\}[^{}]*)*)\}|::\*)?", text):
        head = m.group(1)
        segs = m.group(2).split("::")[1:]
        if not segs and m.group(3) is None:
            continue  # a bare `crate`/`super` (e.g. `pub(super)`)
        if head == "crate":
            base = []
        else:
            # `super` from foo.rs is foo's parent; from foo/mod.rs too (the
            # module is foo, its parent is one up). Inside an inline
            # `mod tests { }` it is the file's own module. Repeated supers
            # climb.
            inside = any(a <= m.start() < b for a, b in inline)
            base = list(key) if inside else list(key[:-1])
            while segs and segs[0] == "super":
                base = base[:-1]
                segs = segs[1:]
        prefixes = [segs]
        if m.group(4) is not None:
            prefixes = []
            for part in re.split(r",(?![^{]*\})", m.group(4)):
                part = part.strip()
                if not part:
                    continue
                first = re.match(IDENT + r"(?:::" + IDENT + r")*", part)
                if first:
                    prefixes.append(segs + first.group(0).split("::"))
        for p in prefixes:
            target = resolve(mods, base + [s for s in p if s != "self"])
            if target is None:
                target = tuple(base) if tuple(base) in mods else None
            if target is not None and target != key:
                out.add(target)
    return out


def sccs(nodes, adj):
    index, low, stack, on, res = {}, {}, [], set(), []
    counter = [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(adj.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            res.append(sorted(comp))

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return res


def name(key):
    return "::".join(key) if key else "lib"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--src", default=os.path.join(here, "..", "..", "crates", "schedlab-core", "src"))
    ap.add_argument("--dot", action="store_true", help="print Graphviz dot instead of a list")
    ap.add_argument("--quiet", action="store_true", help="print only circles")
    a = ap.parse_args()
    mods = module_files(a.src)
    folded = test_files(mods)
    adj = {}
    for key, path in mods.items():
        owner = folded.get(key, key)
        text = strip_comments(open(path, encoding="utf-8").read())
        es = edges_of(mods, key, text, path.endswith("mod.rs"))
        es = {folded.get(e, e) for e in es}
        es.discard(owner)
        adj.setdefault(owner, set()).update(es)
    nodes = [k for k in mods if k not in folded]
    # lib.rs only declares the tree and re-exports; its edges are not imports.
    adj[()] = set()
    if a.dot:
        print("digraph core {")
        for k in sorted(nodes):
            for e in sorted(adj.get(k, ())):
                print(f'  "{name(k)}" -> "{name(e)}";')
        print("}")
    elif not a.quiet:
        for k in sorted(nodes):
            deps = ", ".join(name(e) for e in sorted(adj.get(k, ())))
            print(f"{name(k)} -> {deps}")
    circles = [c for c in sccs(nodes, adj) if len(c) > 1]
    for c in circles:
        print(f"import circle of {len(c)} modules: " + ", ".join(name(k) for k in c), file=sys.stderr)
    if circles:
        return 1
    if not a.dot:
        print(f"modgraph: {len(nodes)} modules, no import circle", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
