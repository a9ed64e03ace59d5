#!/usr/bin/env python3
"""The house's rules as checks (CONTRIBUTING.md "Conventions"), run by
scripts/test.sh beside the import-circle check:

1. typed-errors: no `Result<_, String>` in a library crate's non-test code
   (every crate but the binary, crates/cli): errors are thiserror types.
   Comments, strings and `#[cfg(test)]` items (inline or whole files) are
   left out, with the same reader scripts/import-cycles.py uses.
2. print-lints: every library crate denies `clippy::print_stdout` and
   `clippy::print_stderr` at its root (`#![deny(...)]` in src/lib.rs):
   libraries don't talk to the terminal.
   A `type X = String;` alias counts too (it hid `Result<(), Lost>`).
3. layers: only the binary (crates/cli) depends on shootout-report, the
   presentation: orchestration (runner) and everything below it never
   import it (a normal dependency in a crate's Cargo.toml; dev-dependencies
   are tests).
4. architecture: every crate is named in docs/architecture.md (as
   `crates/NAME` or `shootout-NAME`), and every source file it names in
   backticks (`worker.rs`, `html/ranked.rs`, `crates/cli/src/exit.rs`, ...)
   exists: a bare name must be the end of some file's path under the
   repository's source folders.

Usage: python3 scripts/house-rules.py [--root DIR]. Prints one line per
breach (file:line: rule: what) and a summary; exit 1 on any breach.
"""

from __future__ import annotations

import importlib.util
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("import_cycles", os.path.join(HERE, "import-cycles.py"))
cycles = importlib.util.module_from_spec(_spec)
sys.modules["import_cycles"] = cycles  # dataclasses look their module up
_spec.loader.exec_module(cycles)

BINARY_CRATES = {"cli"}
SOURCE_DIRS = ("crates", "scripts", "bench", "deploy", "targets", "docs", ".ci")
DOC_FILE = re.compile(r"`([A-Za-z0-9_./-]+\.(?:rs|py|sh|mjs|sql))`")


def library_crates(root: str) -> list[str]:
    crates = os.path.join(root, "crates")
    return sorted(
        d for d in os.listdir(crates)
        if d not in BINARY_CRATES and os.path.exists(os.path.join(crates, d, "src", "lib.rs"))
    )


def string_error_results(code: str) -> list[int]:
    """Offsets of every `Result<..., String>` (the last top-level argument)."""
    found = []
    for m in re.finditer(r"\bResult\s*<", code):
        depth, args, start = 1, [], m.end()
        j = m.end()
        while j < len(code) and depth:
            c = code[j]
            if c in "<([":
                depth += 1
            elif c in ">)]" and not (c == ">" and code[j - 1] == "-"):
                depth -= 1
                if depth == 0:
                    args.append(code[start:j])
            elif c == "," and depth == 1:
                args.append(code[start:j])
                start = j + 1
            j += 1
        if len(args) == 2 and re.fullmatch(r"\s*(?:std::string::)?String\s*", args[1]):
            found.append(m.start())
    found += [m.start() for m in re.finditer(r"\btype\s+\w+\s*=\s*(?:std::string::)?String\s*;", code)]
    return sorted(found)


def check_typed_errors(root: str) -> list[str]:
    out = []
    for name in library_crates(root):
        lib = os.path.join(root, "crates", name, "src", "lib.rs")
        top = cycles.load_modules(os.path.dirname(lib), lib)
        for mod in cycles.all_modules(top):
            # mod.code: comments, strings and #[cfg(test)] items blanked,
            # line breaks kept, so offsets give the right line.
            for off in string_error_results(mod.code):
                line = mod.code.count("\n", 0, off) + 1
                rel = os.path.relpath(mod.file, root)
                out.append(f"{rel}:{line}: typed-errors: Result<_, String> or a String alias in a library crate (use a thiserror type)")
    return out


def check_print_lints(root: str) -> list[str]:
    out = []
    for name in library_crates(root):
        lib = os.path.join(root, "crates", name, "src", "lib.rs")
        with open(lib, encoding="utf-8") as f:
            code = cycles.strip_comments_and_strings(f.read())
        denied = set()
        for attr in re.findall(r"#!\[\s*(?:deny|forbid)\s*\(([^\]]*)\)\s*\]", code):
            denied |= set(re.findall(r"clippy::(print_stdout|print_stderr)", attr))
        for lint in ("print_stdout", "print_stderr"):
            if lint not in denied:
                out.append(f"{os.path.relpath(lib, root)}:1: print-lints: does not deny clippy::{lint}")
    return out


PRESENTATION = "shootout-report"


def check_layers(root: str) -> list[str]:
    out = []
    for name in library_crates(root):
        toml = os.path.join(root, "crates", name, "Cargo.toml")
        section = ""
        with open(toml, encoding="utf-8") as f:
            for lineno, line in enumerate(f, 1):
                if m := re.match(r"\s*\[([^\]]+)\]", line):
                    section = m[1].strip()
                elif section == "dependencies" and re.match(rf"\s*{re.escape(PRESENTATION)}\s*[=.]", line):
                    rel = os.path.relpath(toml, root)
                    out.append(f"{rel}:{lineno}: layers: crate {name} depends on {PRESENTATION} (only the CLI may)")
    return out


def source_files(root: str) -> list[str]:
    files = []
    for top in SOURCE_DIRS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames[:] = [d for d in dirnames if d not in ("target", "node_modules", ".venv", "__pycache__")]
            files += [os.path.relpath(os.path.join(dirpath, f), root) for f in filenames]
    return files


def check_architecture(root: str) -> list[str]:
    doc = os.path.join(root, "docs", "architecture.md")
    rel_doc = os.path.relpath(doc, root)
    with open(doc, encoding="utf-8") as f:
        text = f.read()
    out = []
    crates = sorted(
        d for d in os.listdir(os.path.join(root, "crates"))
        if os.path.exists(os.path.join(root, "crates", d, "Cargo.toml"))
    )
    for name in crates:
        if f"crates/{name}" not in text and f"shootout-{name}" not in text:
            out.append(f"{rel_doc}:1: architecture: crate {name} (crates/{name}) is not in the document")
    files = ["/" + f for f in source_files(root)]
    for lineno, line in enumerate(text.splitlines(), 1):
        for named in DOC_FILE.findall(line):
            if not any(f.endswith("/" + named.lstrip("./")) for f in files):
                out.append(f"{rel_doc}:{lineno}: architecture: names `{named}`, which no file is")
    return out


CHECKS = {
    "typed-errors": check_typed_errors,
    "print-lints": check_print_lints,
    "layers": check_layers,
    "architecture": check_architecture,
}


def main(argv: list[str]) -> int:
    root = os.path.dirname(HERE)
    if len(argv) == 2 and argv[0] == "--root":
        root = os.path.abspath(argv[1])
    elif argv:
        print(__doc__, file=sys.stderr)
        return 2
    breaches = 0
    for rule, check in CHECKS.items():
        found = check(root)
        breaches += len(found)
        for line in found:
            print(line)
        print(f"{rule}: {'ok' if not found else f'{len(found)} breach(es)'}")
    return 1 if breaches else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
