#!/usr/bin/env python3
"""Finds import circles between the source files of each crate.

Every crate's files should form a tree: a file may use items of another
file of its crate, but never (directly or through others) of a file that
uses it back. This builds, per crate, the graph "file A names an item
defined in file B" from `use crate::..`, `use super::..`, `use self::..`,
paths written out in code (`crate::x::y`, `child::item`) and re-exports
followed to where the item lives (`pub use`), then prints every strongly
connected group of files with one circle through it.

Test code is left out (`#[cfg(test)]` modules, inline or in files):
a test module importing its parent is how unit tests are written.

Usage: python3 scripts/import-cycles.py [--edges] [CRATE_DIR ...]
       (default: every crates/*/ of the workspace); --edges also prints
       each file's imports. Exit 1 when a circle exists, 0 otherwise.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, field

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"


@dataclass
class Module:
    path: tuple[str, ...]  # from the crate root, () for the root
    file: str
    children: dict[str, "Module"] = field(default_factory=dict)
    # name -> the absolute path a `pub use` makes it stand for
    reexports: dict[str, tuple[str, ...]] = field(default_factory=dict)
    globs: list[tuple[str, ...]] = field(default_factory=list)
    code: str = ""
    parent: "Module | None" = None


def strip_comments_and_strings(src: str) -> str:
    """Blanks comments, string and char literals (keeping line breaks)."""
    out = []
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        if src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
            i = j
        elif src.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if src.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif src.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append("\n" * src.count("\n", i, j))
            i = j
        elif c == "r" and re.match(r'r#*"', src[i:i + 10]) and not re.match(
            r"[A-Za-z0-9_]", src[i - 1:i] or " "
        ):
            hashes = re.match(r'r(#*)"', src[i:]).group(1)
            end = src.find('"' + hashes, i + 2 + len(hashes))
            end = n if end < 0 else end + 1 + len(hashes)
            out.append('""' + "\n" * src.count("\n", i, end))
            i = end
        elif c == '"':
            j = i + 1
            while j < n and src[j] != '"':
                j += 2 if src[j] == "\\" else 1
            out.append('""' + "\n" * src.count("\n", i, j))
            i = j + 1
        elif c == "'":
            # A char literal ('a', '\n', '\u{..}'), not a lifetime ('a).
            m = re.match(r"'(\\u\{[0-9a-fA-F]+\}|\\.|[^\\'])'", src[i:])
            if m:
                out.append("' '")
                i += m.end()
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def block_end(code: str, open_brace: int) -> int:
    depth = 0
    for j in range(open_brace, len(code)):
        if code[j] == "{":
            depth += 1
        elif code[j] == "}":
            depth -= 1
            if depth == 0:
                return j + 1
    return len(code)


CFG_TEST = re.compile(r"#\[cfg\((?:test|all\(test[^\]]*)\)\]\s*")
MOD_DECL = re.compile(
    r"((?:#\[[^\]]*\]\s*)*)(?:pub(?:\([^)]*\))?\s+)?mod\s+(" + IDENT + r")\s*([;{])"
)


def drop_test_code(code: str) -> str:
    """Removes `#[cfg(test)]` items: inline modules and single items."""
    while True:
        m = CFG_TEST.search(code)
        if not m:
            return code
        start, j = m.start(), m.end()
        # the item ends at its first top-level `;` or its closing brace
        k = j
        while k < len(code) and code[k] not in ";{":
            k += 1
        end = k + 1 if k < len(code) and code[k] == ";" else block_end(code, k)
        code = code[:start] + " " * (end - start) + code[end:]


def expand_use_tree(tree: str) -> list[list[str]]:
    """`a::{b, c::{d, e as f}, g::*}` -> [[a,b],[a,c,d],[a,c,e],[a,g,*]]
    (`self` in a group stands for the group's prefix; renames are dropped)."""
    tokens = re.findall(IDENT + r"|::|[{},*]", tree)
    pos = 0
    out: list[list[str]] = []

    def tree_at(prefix: list[str]):
        nonlocal pos
        path = list(prefix)
        while pos < len(tokens):
            t = tokens[pos]
            if t == "{":
                pos += 1
                while pos < len(tokens) and tokens[pos] != "}":
                    if tokens[pos] == ",":
                        pos += 1
                        continue
                    tree_at(path)
                pos += 1
                return
            if t in (",", "}"):
                break
            pos += 1
            if t == "::":
                continue
            if t == "as":
                pos += 1  # the new name
                continue
            if t == "self" and path == prefix and prefix:
                continue
            path.append(t)
        if path != prefix or prefix:
            out.append(path)

    tree_at([])
    return out


def renames(tree: str) -> dict[str, str]:
    return dict(re.findall(r"(" + IDENT + r")\s+as\s+(" + IDENT + r")", tree))


USE = re.compile(r"\b(pub(?:\([^)]*\))?\s+)?use\s+([^;]+);")
PATH = re.compile(r"(?<![A-Za-z0-9_:])((?:" + IDENT + r")(?:\s*::\s*" + IDENT + r")+)")


def split_inline(mod: Module, code: str) -> str:
    """Moves each inline `mod x { .. }` into a child module of the same file
    (so `super::` inside it means `mod`) and returns the code left."""
    while True:
        m = next((m for m in MOD_DECL.finditer(code) if m.group(3) == "{"), None)
        if not m:
            return code
        end = block_end(code, m.end() - 1)
        child = Module(mod.path + (m.group(2),), mod.file, parent=mod)
        child.code = split_inline(child, code[m.end():end - 1])
        mod.children[m.group(2)] = child
        code = code[:m.start()] + " " * (end - m.start()) + code[end:]


def load_modules(src_root: str, root_file: str) -> Module:
    root = Module((), root_file)
    stack = [root]
    while stack:
        mod = stack.pop()
        with open(mod.file, encoding="utf-8") as f:
            code = drop_test_code(strip_comments_and_strings(f.read()))
        mod.code = split_inline(mod, code)
        here = os.path.dirname(mod.file)
        base = os.path.basename(mod.file)
        child_dir = here if base in ("lib.rs", "main.rs", "mod.rs") else os.path.join(
            here, base[:-3]
        )
        for m in MOD_DECL.finditer(code):
            attrs, name, kind = m.group(1), m.group(2), m.group(3)
            if kind == "{":
                continue  # inline module: its code stays in this file
            path_attr = re.search(r'#\[path\s*=\s*""\]', attrs)
            if path_attr:
                # the literal was blanked; read it from the raw source
                raw = open(mod.file, encoding="utf-8").read()
                lit = re.search(
                    r'#\[path\s*=\s*"([^"]+)"\]\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+' + name + r"\s*;",
                    raw,
                )
                file = os.path.join(here, lit.group(1))
            else:
                file = os.path.join(child_dir, name + ".rs")
                if not os.path.exists(file):
                    file = os.path.join(child_dir, name, "mod.rs")
            if not os.path.exists(file):
                continue
            child = Module(mod.path + (name,), file, parent=mod)
            mod.children[name] = child
            stack.append(child)
    return root


def absolute(mod: Module, segs: list[str], root: Module) -> tuple[str, ...] | None:
    """A path as written in `mod`, from the crate root; None if external."""
    if not segs:
        return None
    cur = mod
    first = segs[0]
    if first == "crate":
        return tuple(segs[1:])
    if first in ("self", "super"):
        i = 0
        while i < len(segs) and segs[i] in ("self", "super"):
            if segs[i] == "super":
                if cur.parent is None:
                    return None
                cur = cur.parent
            i += 1
        return cur.path + tuple(segs[i:])
    if first in mod.children:
        return mod.path + tuple(segs)
    return None


def find(root: Module, path: tuple[str, ...], depth: int = 0) -> Module:
    """The module whose file defines the item `path` names."""
    cur = root
    for i, seg in enumerate(path):
        if seg in cur.children:
            cur = cur.children[seg]
            continue
        if seg in cur.reexports and depth < 16:
            return find(root, cur.reexports[seg] + path[i + 1:], depth + 1)
        for g in cur.globs:
            target = find(root, g, depth + 1) if depth < 16 else cur
            if seg in target.children or seg in target.reexports:
                return find(root, g + path[i:], depth + 1)
        return cur
    return cur


def all_modules(root: Module):
    yield root
    for c in root.children.values():
        yield from all_modules(c)


def collect_reexports(root: Module):
    for mod in all_modules(root):
        for m in USE.finditer(mod.code):
            if not m.group(1):
                continue
            tree = m.group(2)
            renamed = renames(tree)
            for segs in expand_use_tree(tree):
                path = absolute(mod, segs, root)
                if path is None:
                    continue
                if segs[-1] == "*":
                    mod.globs.append(path[:-1])
                else:
                    mod.reexports[renamed.get(segs[-1], segs[-1])] = path


def edges(root: Module) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {m.file: set() for m in all_modules(root)}
    for mod in all_modules(root):
        paths: list[list[str]] = []
        code = mod.code
        for m in USE.finditer(mod.code):
            paths.extend(s for s in expand_use_tree(m.group(2)) if s and s[-1] != "*")
            paths.extend(s[:-1] for s in expand_use_tree(m.group(2)) if s and s[-1] == "*")
        code = USE.sub(" ", code)
        code = MOD_DECL.sub(" ", code)
        for m in PATH.finditer(code):
            paths.append(re.sub(r"\s+", "", m.group(1)).split("::"))
        for segs in paths:
            path = absolute(mod, segs, root)
            if path is None:
                continue
            target = find(root, path)
            if target.file != mod.file:
                graph[mod.file].add(target.file)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected groups of more than one file (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on, stack, groups = set(), [], []
    counter = [0]

    def visit(v: str):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return groups


def one_circle(graph: dict[str, set[str]], group: list[str]) -> list[str]:
    """A shortest circle through the group's first file, inside the group."""
    start = group[0]
    members = set(group)
    prev = {start: None}
    queue = [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(graph[v] & members):
            if w == start:
                path = [v]
                while prev[path[-1]] is not None:
                    path.append(prev[path[-1]])
                return list(reversed(path)) + [start]
            if w not in prev:
                prev[w] = v
                queue.append(w)
    return group


def crate_roots(crate_dir: str) -> list[str]:
    src = os.path.join(crate_dir, "src")
    return [
        os.path.join(src, f) for f in ("lib.rs", "main.rs") if os.path.exists(os.path.join(src, f))
    ]


def main(argv: list[str]) -> int:
    show_edges = "--edges" in argv
    argv = [a for a in argv if a != "--edges"]
    here = os.path.dirname(os.path.abspath(__file__))
    workspace = os.path.dirname(here)
    dirs = argv or sorted(
        os.path.join(workspace, "crates", d) for d in os.listdir(os.path.join(workspace, "crates"))
    )
    found = 0
    for crate_dir in dirs:
        for root_file in crate_roots(crate_dir):
            root = load_modules(os.path.dirname(root_file), root_file)
            collect_reexports(root)
            graph = edges(root)
            name = os.path.relpath(root_file, workspace)
            groups = cycles(graph)
            src = os.path.dirname(root_file)
            if show_edges:
                for f in sorted(graph):
                    uses = ", ".join(sorted(os.path.relpath(t, src) for t in graph[f]))
                    print(f"  {os.path.relpath(f, src)} -> {uses or '(nothing)'}")
            if not groups:
                print(f"{name}: {len(graph)} files, no circle")
                continue
            for g in groups:
                found += 1
                rel = [os.path.relpath(f, os.path.dirname(root_file)) for f in one_circle(graph, g)]
                members = ", ".join(os.path.relpath(f, os.path.dirname(root_file)) for f in g)
                print(f"{name}: circle {' -> '.join(rel)}  (group: {members})")
    print(f"{found} circle group(s)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
