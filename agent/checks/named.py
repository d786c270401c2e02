"""The files and public names a task asks for, which must exist before `finish` is accepted: asked for a
module `slugify.js`, a run that wrote only package.json has not finished, whatever its tests say.

Read conservatively, so that an ordinary task is never held up by a word taken for a name:
- a file is a token with a known extension (`slugify.js`, src/lib.rs), not a framework's name (Node.js);
- a name is code: `c_to_f(celsius)` in backticks, `add(a, b)` or `c_to_f(x)` in prose (a plain word with one
  argument, like "file(s)", is not), or one a kind word introduces ("function slugify", "the `slugify` function",
  "class Parser"); names with a dot, builtins and keywords are not;
- a sentence that removes, renames, moves or forbids something names nothing (its old names must go);
- in an existing repository, what was there at the start must still be, and what was not is asked for only
  when a verb of making governs it ("add a function `slugify`", "create `cli.py`"; not "make `f()` faster"); in a new project every
  source file and name is asked for, except after a verb of using ("reads `config.json`", "calls `helper()`")."""

from __future__ import annotations

import builtins
import keyword
import re
from pathlib import Path

from pydantic import BaseModel

from tools.workspace import iter_files

SOURCE_EXTENSIONS = (
    "py", "js", "mjs", "cjs", "ts", "tsx", "jsx", "rs", "go", "java", "kt", "c", "h", "cpp", "cc", "hpp", "rb", "php",
    "cs", "swift", "sh",
)  # fmt: skip
DATA_EXTENSIONS = ("md", "toml", "json", "yaml", "yml", "txt", "cfg", "ini", "html", "css", "sql")
_EXTENSIONS = "|".join(sorted(SOURCE_EXTENSIONS + DATA_EXTENSIONS, key=len, reverse=True))
FILE = re.compile(rf"(?<![\w./@:~-])((?:[\w-]+/)*[\w-]+\.(?:{_EXTENSIONS}))(?![\w/-])")
NOT_FILES = {"node.js", "next.js", "vue.js", "react.js", "express.js", "three.js", "d3.js", "chart.js", "nuxt.js"}
NOT_FILES |= {"angular.js", "ember.js", "backbone.js", "deno.js", "bun.js", "p5.js", "socket.io"}

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
CALL = re.compile(rf"(?<![\w.`])({IDENT})\(([^()\n]*)\)")  # add(a, b) in prose
KIND_BEFORE = re.compile(
    rf"\b(function|def|fn|func|method|class|struct|trait|enum|interface)\s+(?:(?:called|named)\s+)?`?({IDENT})\b"
)
KINDS = {"function", "def", "fn", "func", "method", "class", "struct", "trait", "enum", "interface", "helper"}
TYPE_KINDS = {"class", "struct", "trait", "enum", "interface"}  # "class hierarchy" is prose: these want PascalCase
NOT_NAMES = {
    "that", "to", "which", "the", "a", "an", "and", "or", "for", "with", "in", "on", "of", "is", "should", "will",
    "must", "returns", "return", "taking", "takes", "composition", "signature", "signatures", "call", "calls", "body",
    "name", "names", "pointer", "pointers", "argument", "arguments", "parameter", "parameters", "definition",
    "definitions", "declaration", "it", "they", "each", "per", "as", "from", "by", "this", "its", "so", "but", "if",
    "when", "only", "can", "also", "still", "main", "test", "tests", "describe", "expect", "require", "console",
    "module", "exports", "process", "println", "format", "vec", "len", "append", "make", "new", "panic", "fmt",
    "parseInt", "parseFloat", "setTimeout", "setInterval", "fetch", "JSON", "Math", "Object", "Array", "String",
    "Number", "Promise", "Date", "Error", "Map", "Set", "let", "const", "var", "pub", "impl", "mod", "use", "self",
    "super", "fn", "func", "function", "struct", "enum", "match", "loop", "named", "called",
}  # fmt: skip
NOT_NAMES |= set(keyword.kwlist)
BUILTINS = set(dir(builtins))  # `sorted()` is Python's; a kind word makes one the task's ("a function sum")

# a sentence with one of these names what must go or must not be: nothing in it is asked for
REMOVING = re.compile(
    r"\b(remov\w*|delet\w*|renam\w*|drop\w*|replac\w*|mov(?:e|es|ed|ing)|deprecat\w*|instead|rather than|get rid|"
    r"no longer|without|don't|do not|never|must not|should not|shouldn't|avoid\w*|old|legacy|former|obsolete|unused|"
    r"merg\w*|inlin\w*|split\w*|extract\w*)\b",
    re.IGNORECASE,
)
MAKING = {
    "create", "creates", "creating", "write", "writes", "writing", "add", "adds", "adding", "implement", "implements",
    "implementing", "define", "defines", "defining", "build", "builds", "export", "exports",
    "exporting", "expose", "exposes", "exposing", "provide", "provides", "providing", "introduce", "generate", "new",
}  # fmt: skip
USING = {
    "read", "reads", "reading", "load", "loads", "loading", "parse", "parses", "parsing", "open", "opens", "from",
    "given", "input", "existing", "import", "imports", "importing", "require", "requires", "use", "uses", "using",
    "call", "calls", "calling", "like", "see", "via", "than",
}  # fmt: skip
FILLER = {
    "a", "an", "the", "new", "one", "small", "simple", "single", "public", "module", "file", "function", "method",
    "class", "script", "package", "crate", "library", "helper", "struct", "called", "named", "python", "node",
    "javascript", "typescript", "rust", "go", "cli", "also", "and", "that", "tested", "test", "tests", "with", "its",
}  # fmt: skip
TEST_FILE = re.compile(r"^test_|_test\.\w+$|[.-](test|spec)\.\w+$")
TEST_DIRS = {"tests", "test", "__tests__", "spec"}
CALLERS = {"assert", "return", "await", "yield", "throw", "not", "and", "or", "in", "print", "echo", "if", "else"}
NEAR = 6  # words looked at before a name for the verb that governs it


class Asked(BaseModel):
    """What must exist when the run finishes: files (relative paths; a bare name may be in any folder) and
    names some source file must define."""

    files: list[str] = []
    names: list[str] = []


def asked_for(task: str, workspace: Path, new_project: bool = False) -> Asked:
    """What `task` asks to exist in `workspace` at the end (see the module's rules); `new_project`: the task is
    a new project's request, so what it names is to be made."""
    files: dict[str, None] = {}
    names: dict[str, None] = {}
    sources: dict[Path, str] | None = None  # read once, when the task names a name
    for sentence in re.split(r"(?<=[.!?])\s+|\n+", task):
        if REMOVING.search(sentence):
            continue
        tokens = _tokens(sentence)
        seen = {word for _, token, _ in tokens for word in re.findall(r"[A-Za-z']+", token)}
        for kind, token, at in tokens:
            governed = _governed(re.sub(r"`[^`]*`", " ", sentence[:at]), seen)
            if kind == "file":
                there = _file_exists(token, workspace)
                source = token.rsplit(".", 1)[1] in SOURCE_EXTENSIONS
                if there or governed == "make" or (new_project and source and governed != "use"):
                    files[token] = None
            else:
                sources = _sources(workspace) if sources is None else sources
                there = _defined(token, sources)
                if there or governed == "make" or (new_project and governed != "use"):
                    names[token] = None
    return Asked(files=list(files), names=list(names))


def missing(asked: Asked, workspace: Path) -> list[str]:
    """What of `asked` is not in `workspace` now, each as a few words."""
    sources = _sources(workspace) if asked.names else {}
    gone = [f"{name} (no such file)" for name in asked.files if not _file_exists(name, workspace)]
    return gone + [f"{name} (no source file defines it)" for name in asked.names if not _defined(name, sources)]


def _tokens(sentence: str) -> list[tuple[str, str, int]]:
    """(kind, token, where) for each file and name the sentence names, in order."""
    found: list[tuple[str, str, int]] = []
    kinded: set[str] = set()
    for match in FILE.finditer(sentence):
        if match.group(1).lower() not in NOT_FILES:
            found.append(("file", match.group(1), match.start()))
    for match in re.finditer(r"`([^`\n]+)`", sentence):
        text = match.group(1).strip()
        call = re.fullmatch(rf"({IDENT})\s*\(.*\)?", text)
        if call:
            found.append(("name", call.group(1), match.start()))
        elif re.fullmatch(IDENT, text) and _kind_beside(sentence, match.start(), match.end()):
            found.append(("name", text, match.start()))
    for match in CALL.finditer(sentence):
        name, args = match.groups()
        if _code_like(name) or "," in args or not args.strip():
            found.append(("name", name, match.start()))
    for match in KIND_BEFORE.finditer(sentence):
        kind, name = match.groups()
        if kind in TYPE_KINDS and not name[0].isupper() and not _code_like(name):
            continue
        if kind == "method" and not _code_like(name) and not sentence[match.end() :].startswith("("):
            continue
        found.append(("name", name, match.start(2)))
        kinded.add(name)
    return [
        (kind, token, at)
        for kind, token, at in sorted(found, key=lambda t: t[2])
        if kind == "file" or (token not in NOT_NAMES and (token in kinded or token not in BUILTINS) and len(token) > 1)
    ]


def _kind_beside(sentence: str, start: int, end: int) -> bool:
    """ "function `slugify`", "a function named `slugify`", "the `slugify` function"."""
    before = [w.lower() for w in re.findall(r"[A-Za-z]+", sentence[:start])[-3:]]
    while before and before[-1] in ("named", "called", "new", "public"):
        before.pop()
    after = re.match(r"\s*([A-Za-z]+)", sentence[end:])
    return bool(before and before[-1] in KINDS) or (after is not None and after.group(1).lower() in KINDS)


def _code_like(name: str) -> bool:
    """snake_case, a digit or camelCase: not an English word."""
    return "_" in name or any(c.isdigit() for c in name) or any(c.isupper() for c in name[1:])


def _governed(before: str, tokens: set[str]) -> str:
    """ "make", "use" or "" for the nearest verb before a token, past filler words ("add a new function") and
    the sentence's other files and names ("create cli.py with class Parser and a run_all() helper")."""
    for word in reversed(re.findall(r"[A-Za-z']+", before)[-NEAR * 2 :]):
        if word in tokens:
            continue
        word = word.lower()
        if word in MAKING:
            return "make"
        if word in USING:
            return "use"
        if word not in FILLER:
            return ""
    return ""


def _file_exists(name: str, workspace: Path) -> bool:
    if (workspace / name).is_file():
        return True
    return "/" not in name and any(p.name == name for p in iter_files(workspace, workspace))


def _sources(workspace: Path, limit: int = 2000) -> dict[Path, str]:
    """The project's source files but its tests (a test calling `slugify(...)` does not define it)."""
    texts: dict[Path, str] = {}
    for path in iter_files(workspace, workspace):
        parts = path.relative_to(workspace).parts
        if path.suffix.lstrip(".") in SOURCE_EXTENSIONS and not (
            TEST_FILE.search(path.name) or TEST_DIRS & set(parts[:-1])
        ):
            try:
                if path.stat().st_size < 500_000:
                    texts[path] = path.read_text(errors="replace")
            except OSError:
                continue
            if len(texts) >= limit:
                break
    return texts


def _defined(name: str, sources: dict[Path, str]) -> bool:
    """Whether a source file defines `name`: a definition in any of the languages the project knows, or an
    assignment to it (`exports.slugify = ...`, `NAME = 1`)."""
    n = re.escape(name)
    definition = re.compile(
        rf"\b(?:def|class|function\*?|fn|func|struct|enum|trait|type|interface|const|let|var|static|val|fun|"
        rf"macro_rules!)\s+{n}\b"
        rf"|\b{n}\s*(?:=(?![=>])|:(?!:))"
        rf"|^\s*(?:(?:async|static|public|private|protected|get|set)\s+)*{n}\s*\([^)\n]*\)\s*\{{",
        re.MULTILINE,
    )
    typed = re.compile(rf"(\w*)[>\])*&]?\s+\*?{n}\s*(?:<[^>\n]*>)?\s*\(")  # int add(, func (s *S) add(
    return any(
        definition.search(text) or any(m.group(1) not in CALLERS for m in typed.finditer(text))
        for text in sources.values()
    )
