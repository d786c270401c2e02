"""List the command-line flags of `vllm serve` or SGLang's `launch_server` from a wheel's argument-parser sources.

Neither engine prints its `--help` without torch and a GPU stack, so the flags are read from the parser code
itself (Python's `ast`; nothing is imported or run):

- vLLM: every string given to `add_argument` in `vllm/engine/arg_utils.py` and
  `vllm/entrypoints/common/cli_args.py`, plus the fields of its `FrontendArgs` dataclasses, which become
  `--field-name` (`add_cli_args`). BooleanOptionalAction's `--no-NAME` twins are not listed.
- SGLang: every string given to `add_argument` in `sglang/srt/server_args.py`, plus every `A[type, help]` /
  `A[type, Arg(...)]` field of `sglang/srt/arg_groups/fields/*.py` (`add_cli_args_from_dataclass`): the
  field as `--field-name` or its `cli_name`, its `aliases`, none with `no_cli=True`.

Usage: python scripts/engine_flags.py vllm-0.33.0-...whl > inference/dialects/vllm-0.33.0-serve-flags.txt
"""

from __future__ import annotations

import ast
import sys
import zipfile
from pathlib import PurePosixPath


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


if __name__ == "__main__":
    wheel = sys.argv[1]
    command, flags = engine_flags(wheel)
    print(f"# `{command}` flags, read from the argument-parser sources of {PurePosixPath(wheel).name}")
    print("# by scripts/engine_flags.py (nothing imported or run); one flag per line")
    print("\n".join(flags))
