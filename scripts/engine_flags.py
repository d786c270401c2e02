"""List the command-line flags of `vllm serve` or SGLang's `launch_server` from a wheel's argument-parser sources.

Neither engine prints its `--help` without torch and a GPU stack, so the flags are read from the parser code
itself (Python's `ast`; nothing is imported or run):

- vLLM: every string given to `add_argument` in `vllm/engine/arg_utils.py` and
  `vllm/entrypoints/common/cli_args.py`, plus the fields of its `FrontendArgs` dataclasses, which become
  `--field-name` (`add_cli_args`). BooleanOptionalAction's `--no-NAME` twins are not listed.
- SGLang: every string given to `add_argument` in `sglang/srt/server_args.py`, plus every `A[type, help]` /
  `A[type, Arg(...)]` field of `sglang/srt/arg_groups/fields/*.py` (`add_cli_args_from_dataclass`): the
  field as `--field-name` or its `cli_name`, its `aliases`, none with `no_cli=True`.

- llama-server (a llama.cpp or BeeLlama source tree, for a version nobody here has built): every
  `add_opt(common_arg({"-x", "--xx"}, ...))` of `common/arg.cpp` that llama-server takes (its `set_examples`
  names the server or the common set, or names a list held in a variable; `set_excludes` does not name the
  server), with the `--spec-type` values of `common/speculative.cpp` and the KV cache types of `common/arg.cpp`,
  written in the `--help` layout that `inference.engines.capabilities.parse_help` reads.

Usage: python scripts/engine_flags.py vllm-0.33.0-...whl > inference/dialects/vllm-0.33.0-serve-flags.txt
       python scripts/engine_flags.py --llama-tree SRC "BeeLlama v0.4.x at COMMIT" > inference/dialects/...txt
"""

from __future__ import annotations

import ast
import re
import sys
import zipfile
from pathlib import Path, PurePosixPath


def add_argument_flags(tree: ast.AST) -> set[str]:
    flags = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "add_argument":
            for arg in node.args:
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and arg.value.startswith("-"):
                    flags.add(arg.value)
    return flags


def dataclass_flags(tree: ast.AST, classes: set[str] | None = None) -> set[str]:
    """`--field-name` for annotated fields of the named classes (all classes when None)."""
    flags = set()
    for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
        if classes is not None and cls.name not in classes:
            continue
        for item in cls.body:
            if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                flags |= _field_flags(item.target.id, item.annotation, sglang_style=classes is None)
    return flags


def _field_flags(name: str, annotation: ast.expr, sglang_style: bool) -> set[str]:
    if name.startswith("_"):
        return set()
    if not sglang_style:
        return {"--" + name.replace("_", "-")}
    # SGLang: only `A[type, "help"]` or `A[type, Arg(...)]` fields are registered
    if not (isinstance(annotation, ast.Subscript) and getattr(annotation.value, "id", None) in ("A", "Annotated")):
        return set()
    parts = annotation.slice.elts if isinstance(annotation.slice, ast.Tuple) else []
    meta = parts[1] if len(parts) > 1 else None
    if isinstance(meta, ast.Constant) and isinstance(meta.value, str):
        return {"--" + name.replace("_", "-")}
    if not (isinstance(meta, ast.Call) and getattr(meta.func, "id", None) == "Arg"):
        return set()
    keywords = {k.arg: k.value for k in meta.keywords}
    if isinstance(keywords.get("no_cli"), ast.Constant) and keywords["no_cli"].value is True:
        return set()
    cli_name = keywords.get("cli_name")
    flags = {cli_name.value if isinstance(cli_name, ast.Constant) else "--" + name.replace("_", "-")}
    aliases = keywords.get("aliases")
    if isinstance(aliases, ast.List):
        flags |= {e.value for e in aliases.elts if isinstance(e, ast.Constant)}
    return flags


def engine_flags(wheel: str) -> tuple[str, list[str]]:
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()

        def parse(path: str) -> ast.AST:
            return ast.parse(zf.read(path).decode())

        if "vllm/engine/arg_utils.py" in names:
            cli = parse("vllm/entrypoints/common/cli_args.py")
            flags = add_argument_flags(parse("vllm/engine/arg_utils.py")) | add_argument_flags(cli)
            flags |= dataclass_flags(cli, {"BaseFrontendArgs", "FrontendArgs"})
            return "vllm serve", sorted(flags)
        if "sglang/srt/server_args.py" in names:
            flags = add_argument_flags(parse("sglang/srt/server_args.py"))
            for path in names:
                p = PurePosixPath(path)
                if p.parent == PurePosixPath("sglang/srt/arg_groups/fields") and p.suffix == ".py":
                    flags |= dataclass_flags(parse(path))
            return "python -m sglang.launch_server", sorted(flags)
    raise SystemExit(f"{wheel}: neither a vllm nor an sglang wheel")


# ---------------------------------------------------------------- llama-server from its C++ sources

SERVER_EXAMPLES = ("LLAMA_EXAMPLE_SERVER", "LLAMA_EXAMPLE_COMMON")


def _balanced(text: str, start: int) -> int:
    """Index just past the parenthesis group opening at text[start] (string and char literals skipped)."""
    depth, i = 0, start
    while i < len(text):
        ch = text[i]
        if text.startswith("//", i):  # a comment may hold an apostrophe
            i = text.index("\n", i)
            continue
        if ch in "\"'":
            end = i + 1
            while text[end] != ch:
                end += 2 if text[end] == "\\" else 1
            i = end + 1
            continue
        depth += {"(": 1, ")": -1}.get(ch, 0)
        i += 1
        if depth == 0:
            return i
    raise ValueError("unbalanced parentheses in common/arg.cpp")


def _server_takes(option: str) -> bool:
    examples = re.search(r"\.set_examples\(([^)]*)\)", option)
    excludes = re.search(r"\.set_excludes\(([^)]*)\)", option)
    if excludes and "LLAMA_EXAMPLE_SERVER" in excludes.group(1):
        return False
    if examples is None or "{" not in examples.group(1):  # the default (common) or a list held in a variable
        return True
    return any(name in examples.group(1) for name in SERVER_EXAMPLES)


def llama_server_options(arg_cpp: str) -> list[tuple[list[str], str]]:
    """(flags, value hint) of every option llama-server takes, in the order of `common/arg.cpp`."""
    options = []
    for found in re.finditer(r"add_opt\(common_arg\(", arg_cpp):
        if "llama_supports_rpc()" in arg_cpp[max(0, found.start() - 100) : found.start()]:
            continue  # `--rpc` is listed only by builds with the RPC backend; the renderer adds it for those
        body = arg_cpp[found.end() : _balanced(arg_cpp, found.start() + len("add_opt")) - 1]
        flags, rest = [], body.lstrip()
        while rest.startswith("{"):  # the flag lists: {"-x", "--xx"} and, for booleans, {"--no-xx"}
            group, rest = rest[1:].split("}", 1)
            flags += [f for f in re.findall(r'"([^"]+)"', group) if f.startswith("-")]
            rest = rest.lstrip().removeprefix(",").lstrip()
        hint = re.match(r'"([A-Z][A-Z0-9_|,<>.-]*)"\s*,', rest)
        if flags and _server_takes(body):
            options.append((flags, hint.group(1) if hint else ""))
    return options


def llama_spec_types(speculative_cpp: str) -> list[str]:
    return re.findall(r'\{\s*"([\w-]+)",\s*COMMON_SPECULATIVE_TYPE_\w+\s*\}', speculative_cpp)


def llama_cache_types(arg_cpp: str) -> list[str]:
    block = re.search(r"kv_cache_types\s*=\s*\{([^}]*)\}", arg_cpp)
    names = re.findall(r"GGML_TYPE_(\w+)", block.group(1)) if block else []
    types = [name.lower().removesuffix("s") if name.endswith("_0S") else name.lower() for name in names]
    if ", kvarn2, kvarn3, kvarn4, kvarn5, kvarn6, kvarn8" in arg_cpp:  # BeeLlama >= v0.4: KVarN pseudo-types
        types += [f"kvarn{bits}" for bits in (2, 3, 4, 5, 6, 8)]
    return types


def llama_server_help(tree: str, label: str) -> str:
    """A `--help`-shaped listing of llama-server's options from a source tree (one option a line)."""
    root = Path(tree)
    arg_cpp = (root / "common" / "arg.cpp").read_text()
    spec_types = llama_spec_types((root / "common" / "speculative.cpp").read_text())
    cache_types = llama_cache_types(arg_cpp)
    lines = [
        f"# llama-server options of {label}, read from common/arg.cpp and common/speculative.cpp",
        "# by scripts/engine_flags.py (nothing built or run); one option a line, choices in brackets",
    ]
    for flags, hint in llama_server_options(arg_cpp):
        if "--spec-type" in flags:
            hint = "[" + "|".join(spec_types) + "]"
        elif "--cache-type-k" in flags or "--cache-type-v" in flags:
            hint = "[" + "|".join(cache_types) + "]"
        lines.append(", ".join(flags) + (f" {hint}" if hint else ""))
    return "\n".join(lines)


if __name__ == "__main__":
    if sys.argv[1] == "--llama-tree":
        print(llama_server_help(sys.argv[2], sys.argv[3]))
        raise SystemExit(0)
    wheel = sys.argv[1]
    command, flags = engine_flags(wheel)
    print(f"# `{command}` flags, read from the argument-parser sources of {PurePosixPath(wheel).name}")
    print("# by scripts/engine_flags.py (nothing imported or run); one flag per line")
    print("\n".join(flags))
