"""Analysis tools: project_analyzer (four actions) and codegraph (our design).

codegraph's parameters are not given by the spec; it answers three questions about code:
`symbols` (definitions in a file or directory), `references` (where a name is used, whole-word,
via ripgrep) and `imports` (the import edges of Python modules). Python is read with `ast`;
Go, JavaScript/TypeScript and Rust definitions with line patterns.
"""

from __future__ import annotations

import ast
import os
import re
from collections import Counter
from pathlib import Path
from typing import Any

from engine.tools.base import Tool, ToolContext, ToolError, ToolResult, integer, schema, string

LANGUAGES = {
    ".py": "Python",
    ".go": "Go",
    ".js": "JavaScript",
    ".mjs": "JavaScript",
    ".cjs": "JavaScript",
    ".jsx": "JavaScript",
    ".ts": "TypeScript",
    ".tsx": "TypeScript",
    ".rs": "Rust",
    ".java": "Java",
    ".kt": "Kotlin",
    ".rb": "Ruby",
    ".php": "PHP",
    ".c": "C",
    ".h": "C",
    ".cc": "C++",
    ".cpp": "C++",
    ".hpp": "C++",
    ".cs": "C#",
    ".swift": "Swift",
    ".scala": "Scala",
    ".sh": "Shell",
    ".bash": "Shell",
    ".k": "KCL",
    ".sql": "SQL",
    ".html": "HTML",
    ".css": "CSS",
    ".scss": "CSS",
    ".md": "Markdown",
    ".yaml": "YAML",
    ".yml": "YAML",
    ".toml": "TOML",
    ".json": "JSON",
    ".proto": "Protocol Buffers",
    ".tf": "HCL",
    ".lua": "Lua",
    ".ex": "Elixir",
    ".exs": "Elixir",
    ".dart": "Dart",
    ".vue": "Vue",
}
# marker file -> project type (project_analyzer detect_type)
MARKERS = {
    "framework.yaml": "framework",
    "pyproject.toml": "python",
    "setup.py": "python",
    "requirements.txt": "python",
    "package.json": "node",
    "tsconfig.json": "typescript",
    "go.mod": "go",
    "Cargo.toml": "rust",
    "pom.xml": "java-maven",
    "build.gradle": "java-gradle",
    "build.gradle.kts": "kotlin-gradle",
    "Gemfile": "ruby",
    "composer.json": "php",
    "mix.exs": "elixir",
    "CMakeLists.txt": "cmake",
    "pubspec.yaml": "dart",
    "Package.swift": "swift",
    "deno.json": "deno",
}
BUILD_FILES = {
    "Makefile",
    "makefile",
    "GNUmakefile",
    "pyproject.toml",
    "setup.py",
    "setup.cfg",
    "tox.ini",
    "noxfile.py",
    "package.json",
    "go.mod",
    "Cargo.toml",
    "CMakeLists.txt",
    "build.gradle",
    "build.gradle.kts",
    "settings.gradle",
    "pom.xml",
    "Dockerfile",
    "docker-compose.yml",
    "docker-compose.yaml",
    "compose.yaml",
    "compose.yml",
    "justfile",
    "Justfile",
    "Taskfile.yml",
    "BUILD",
    "BUILD.bazel",
    "WORKSPACE",
    "meson.build",
    "Gemfile",
    "Rakefile",
    "mix.exs",
    "framework.yaml",
    "Containerfile",
    "Procfile",
    "kcl.mod",
}
TEST_PATTERNS = (
    re.compile(r"(^|/)test_[^/]*\.py$"),
    re.compile(r"_test\.py$"),
    re.compile(r"_test\.go$"),
    re.compile(r"\.(test|spec)\.[cm]?[jt]sx?$"),
    re.compile(r"(^|/)(tests?|__tests__|spec)/"),
    re.compile(r"Test\.java$"),
    re.compile(r"_spec\.rb$"),
    re.compile(r"(^|/)src/test/"),
)


def _files(ctx: ToolContext, where: Path) -> list[str]:
    from engine.tools.search import list_files

    return [os.path.relpath(p, where) for p in list_files(ctx, where)]


def project_analyzer(params: dict[str, Any], ctx: ToolContext) -> ToolResult:
    where = ctx.resolve(params.get("path"))
    if not where.is_dir():
        raise ToolError(f"{where} is not a directory")
    action = params["action"]
    files = _files(ctx, where)
    if action == "detect_type":
        found: dict[str, list[str]] = {}
        for f in files:
            name = f.rsplit("/", 1)[-1]
            if name in MARKERS and f.count("/") <= 1:
                found.setdefault(MARKERS[name], []).append(f)
        types = sorted(found, key=lambda t: min(x.count("/") for x in found[t]))
        text = "".join(f"{t}: {', '.join(sorted(found[t]))}\n" for t in types) or "no known project markers\n"
        return ToolResult(output=text, data={"types": types, "evidence": found})
    if action == "find_build_files":
        builds = sorted(
            f
            for f in files
            if f.rsplit("/", 1)[-1] in BUILD_FILES
            or re.match(r"\.github/workflows/.+\.ya?ml$", f)
            or f == ".gitlab-ci.yml"
        )
        return ToolResult(
            output="".join(f + "\n" for f in builds) or "no build files found\n", data={"build_files": builds}
        )
    if action == "detect_languages":
        counts: Counter[str] = Counter()
        sizes: Counter[str] = Counter()
        for f in files:
            lang = LANGUAGES.get(os.path.splitext(f)[1].lower())
            if lang:
                counts[lang] += 1
                try:
                    sizes[lang] += (where / f).stat().st_size
                except OSError:
                    pass
        rows = [{"language": lang, "files": n, "bytes": sizes[lang]} for lang, n in counts.most_common()]
        text = "".join(f"{r['language']}: {r['files']} files, {r['bytes']} bytes\n" for r in rows)
        return ToolResult(output=text or "no source files recognised\n", data={"languages": rows})
    if action == "find_tests":
        tests = sorted(f for f in files if any(p.search(f) for p in TEST_PATTERNS))
        frameworks = []
        names = set(files)
        if any(f.endswith(".py") for f in tests) or "pytest.ini" in names or "conftest.py" in names:
            frameworks.append("pytest")
        if any(f.endswith("_test.go") for f in tests):
            frameworks.append("go test")
        if any(re.search(r"\.(test|spec)\.[cm]?[jt]sx?$", f) for f in tests):
            frameworks.append("jest/vitest")
        text = (
            f"{len(tests)} test files"
            + (f" ({', '.join(frameworks)})" if frameworks else "")
            + "\n"
            + "".join(f + "\n" for f in tests[:500])
        )
        return ToolResult(output=text, data={"tests": tests, "frameworks": frameworks})
    raise ToolError(
        f"unknown action {action!r}: detect_type, find_build_files, detect_languages or find_tests"
    )


_DEFS = {
    ".go": re.compile(r"^\s*(func|type)\s+(?:\([^)]*\)\s*)?([A-Za-z_]\w*)"),
    ".rs": re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?(fn|struct|enum|trait|impl|mod)\s+([A-Za-z_]\w*)"),
    ".js": re.compile(
        r"^\s*(?:export\s+)?(?:default\s+)?(?:async\s+)?(function|class|const|let)\s+([A-Za-z_$][\w$]*)"
    ),
}
_DEFS.update({ext: _DEFS[".js"] for ext in (".ts", ".tsx", ".jsx", ".mjs", ".cjs")})


def _python_symbols(text: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                kind = "class" if isinstance(child, ast.ClassDef) else ("method" if prefix else "function")
                out.append({"name": prefix + child.name, "kind": kind, "line": child.lineno})
                if isinstance(child, ast.ClassDef):
                    visit(child, prefix + child.name + ".")

    visit(ast.parse(text), "")
    return out


def _symbols(path: Path) -> list[dict[str, Any]]:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    ext = path.suffix.lower()
    if ext == ".py":
        try:
            return _python_symbols(text)
        except SyntaxError:
            return []
    rx = _DEFS.get(ext)
    if rx is None:
        return []
    return [
        {"name": m.group(2), "kind": m.group(1), "line": n}
        for n, line in enumerate(text.splitlines(), start=1)
        if (m := rx.match(line))
    ]


def codegraph(params: dict[str, Any], ctx: ToolContext) -> ToolResult:
    action = params["action"]
    where = ctx.resolve(params.get("path"))
    limit = int(params.get("head_limit") or 500)
    if not where.exists():
        raise ToolError(f"path not found: {where}", code="not_found")
    targets = [where] if where.is_file() else [where / f for f in _files(ctx, where)]
    if action == "symbols":
        rows = []
        for file in targets:
            for sym in _symbols(file):
                rows.append({"file": os.path.relpath(file, ctx.root), **sym})
        rows = rows[:limit]
        text = "".join(f"{r['file']}:{r['line']}: {r['kind']} {r['name']}\n" for r in rows)
        return ToolResult(output=text or "no symbols found\n", data={"symbols": rows})
    if action == "references":
        symbol = params.get("symbol")
        if not symbol:
            raise ToolError("references needs `symbol`")
        from engine.tools.search import grep

        found = grep(
            {
                "pattern": symbol,
                "fixed_strings": True,
                "word_boundary": True,
                "output_mode": "content",
                "path": str(where),
                "head_limit": limit,
            },
            ctx,
        )
        return ToolResult(output=found.output, data={"references": found.data["results"]})
    if action == "imports":
        edges = []
        for file in targets:
            if file.suffix != ".py":
                continue
            try:
                tree = ast.parse(file.read_text(encoding="utf-8", errors="replace"))
            except (SyntaxError, OSError):
                continue
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    edges += [
                        {"file": os.path.relpath(file, ctx.root), "imports": a.name} for a in node.names
                    ]
                elif isinstance(node, ast.ImportFrom):
                    edges.append(
                        {
                            "file": os.path.relpath(file, ctx.root),
                            "imports": "." * node.level + (node.module or ""),
                        }
                    )
        edges = edges[:limit]
        return ToolResult(
            output="".join(f"{e['file']} -> {e['imports']}\n" for e in edges) or "no imports\n",
            data={"imports": edges},
        )
    raise ToolError(f"unknown action {action!r}: symbols, references or imports")


TOOLS = [
    Tool(
        "project_analyzer",
        ("analysis", "readonly", "default"),
        "Analyze a project: detect_type, find_build_files, detect_languages, find_tests.",
        schema(
            {
                "action": string(
                    "detect_type, find_build_files, detect_languages or find_tests",
                    enum=["detect_type", "find_build_files", "detect_languages", "find_tests"],
                ),
                "path": string("directory; default project root"),
            },
            ("action",),
        ),
        project_analyzer,
    ),
    Tool(
        "codegraph",
        ("analysis", "readonly"),
        "Code structure: symbols (definitions), references (whole-word uses of a symbol), imports (Python).",
        schema(
            {
                "action": string("symbols, references or imports", enum=["symbols", "references", "imports"]),
                "path": string("file or directory; default project root"),
                "symbol": string("name to find (references)"),
                "head_limit": integer("max results; default 500", minimum=1),
            },
            ("action",),
        ),
        codegraph,
    ),
]
