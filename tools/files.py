"""File tools: read, write, edit by exact replacement, list and search, all confined to the workspace."""

from __future__ import annotations

import contextlib
import difflib
import errno
import os
import re
import secrets
import stat
import time
from pathlib import Path
from typing import Any

import regex
from pydantic import BaseModel, Field, field_validator

from tools.base import Tool, ToolContext, ToolError, ToolResult
from tools.workspace import iter_files, open_folder, relative, resolve_inside

BINARY_SNIFF = 8192
MAX_FILE_BYTES = 2_000_000
SEARCH_SECONDS = 10.0
MAX_PREVIEW_LINES = 200


def read_text(path: Path, shown_as: str) -> str:
    """The file's text. Opened without blocking and checked to be a regular file on the open handle: a FIFO,
    socket or device (planted in the workspace) is an error, not a read that never returns."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise ToolError(f"{shown_as} does not exist; use list_files to see what is there") from None
    except OSError as exc:
        if exc.errno in (errno.ENXIO, errno.EOPNOTSUPP):  # a unix socket
            raise ToolError(f"{shown_as} is not a regular file (a socket); it cannot be read") from None
        raise
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise ToolError(f"{shown_as} is a directory; use list_files on it")
        if not stat.S_ISREG(info.st_mode):
            raise ToolError(f"{shown_as} is not a regular file (a FIFO, socket or device); it cannot be read")
        size = info.st_size
        if size > MAX_FILE_BYTES:
            raise ToolError(f"{shown_as} is {size} bytes, too big to read whole; use search or bash (head, sed -n)")
        data = handle.read(MAX_FILE_BYTES + 1)
    if b"\x00" in data[:BINARY_SNIFF]:
        raise ToolError(f"{shown_as} is a binary file ({size} bytes); it cannot be shown as text")
    return data.decode("utf-8", errors="replace")


def is_utf8(path: Path) -> bool:
    try:
        path.read_bytes().decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


def write_atomically(workspace: Path, path: Path, content: str) -> None:
    """Write `content` to `path` (inside `workspace`) so that it lands there and nowhere else, whole or not
    at all: the folder is opened component by component without following links (`open_folder`, which
    also refuses `.git`), an exclusive temporary file with an unpredictable name is created in it with
    O_EXCL|O_NOFOLLOW, and renamed over the name inside that same folder handle. A symlink planted at the
    temporary name, the target name or any folder on the way cannot redirect the write. A full disk or a
    crash mid-write leaves the old content; the file's permissions are kept."""
    folder = open_folder(workspace, path.parent, create=True)
    temporary = f".{path.name[:200]}.{secrets.token_hex(8)}.dflash-tmp"
    try:
        try:
            mode = os.stat(path.name, dir_fd=folder, follow_symlinks=False).st_mode
            keep = stat.S_IMODE(mode) if stat.S_ISREG(mode) else None
        except FileNotFoundError:
            keep = None
        fd = os.open(
            temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666, dir_fd=folder
        )
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(content.encode("utf-8"))
                if keep is not None:
                    os.fchmod(handle.fileno(), keep)
            os.replace(temporary, path.name, src_dir_fd=folder, dst_dir_fd=folder)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary, dir_fd=folder)
            raise
    finally:
        os.close(folder)


def refuse_when_read_only(ctx: ToolContext, shown_as: str) -> None:
    """File tools run in-process, not under bubblewrap: the read-only sandbox mode is enforced here."""
    if ctx.policy.sandbox.mode == "read-only":
        raise ToolError(
            f'cannot change {shown_as}: the sandbox is read-only (sandbox = "read-only" in the '
            "configuration), so files can be read but not written or edited"
        )


class ReadParams(BaseModel):
    path: str = Field(description="File path relative to the project root.")
    start_line: int = Field(default=1, ge=1, description="First line to show (1-based).")
    end_line: int | None = Field(default=None, ge=1, description="Last line to show (inclusive).")


class ReadFileTool(Tool):
    name = "read_file"
    description = "Read a text file, optionally a range of lines."
    Params = ReadParams
    read_only = True

    def run(self, params: ReadParams, ctx: ToolContext) -> ToolResult:
        path = resolve_inside(ctx.workspace, params.path)
        lines = read_text(path, params.path).splitlines()
        if not lines:
            return ToolResult(output=f"{params.path} is empty")
        start = params.start_line
        if start > len(lines):
            raise ToolError(f"{params.path} has only {len(lines)} lines; start_line {start} is past the end")
        wanted = min(params.end_line or len(lines), len(lines))
        end = min(wanted, start + ctx.policy.max_read_lines - 1)
        shown = "\n".join(lines[start - 1 : end])
        if "\ufffd" in shown and not is_utf8(path):
            shown = "[not valid UTF-8: undecodable bytes are shown as \ufffd]\n" + shown
        note = "" if end == wanted else f"\n[... lines {end + 1}-{wanted} not shown; ask for them with start_line]"
        return ToolResult(output=f"{params.path} (lines {start}-{end} of {len(lines)}):\n{shown}{note}")


class WriteParams(BaseModel):
    path: str = Field(description="File path relative to the project root; folders are created.")
    content: str = Field(description="The complete new file content.")


class WriteFileTool(Tool):
    name = "write_file"
    description = "Create or overwrite a file with the given complete content."
    Params = WriteParams
    batchable = True
    multiline_params = frozenset({"content"})
    preview_syntax = "diff"

    def preview(self, arguments: dict[str, Any], workspace: Path) -> str:
        """The diff the write would make."""
        path, content = arguments.get("path"), arguments.get("content")
        if not isinstance(path, str):
            return super().preview(arguments, workspace)
        return diff_preview(path, current_text(workspace, path), content if isinstance(content, str) else "")

    def run(self, params: WriteParams, ctx: ToolContext) -> ToolResult:
        refuse_when_read_only(ctx, params.path)
        path = resolve_inside(ctx.workspace, params.path, for_write=True)
        if path.is_dir():
            raise ToolError(f"{params.path} is a directory")
        content = params.content if params.content.endswith("\n") or not params.content else params.content + "\n"
        existed = path.exists()
        write_atomically(ctx.workspace, path, content)
        verb = "overwrote" if existed else "created"
        name = relative(ctx.workspace, path)
        return ToolResult(output=f"{verb} {name} ({content.count(chr(10))} lines)", files=[name])


class EditParams(BaseModel):
    path: str | None = Field(
        default=None,
        description="File path relative to the project root; optional: without it, the one file that has `old` "
        "(with replace_all, every file that has it).",
    )
    old: str = Field(description="Exact text to replace; must occur exactly once in the file.")
    new: str = Field(description="Replacement text.")
    replace_all: bool = Field(
        default=False, description="true to replace every occurrence of `old` (a rename); optional."
    )

    @field_validator("replace_all", mode="before")
    @classmethod
    def _lenient_flag(cls, value: Any) -> Any:
        """A small model writes `true`, `True`, `yes` or copies the description ("true to replace...")."""
        if isinstance(value, str):
            return value.strip().lower().startswith(("true", "yes", "1"))
        return value


class EditFileTool(Tool):
    name = "edit_file"
    description = (
        "Replace one exact occurrence of `old` with `new` in a file (include enough context to be unique), "
        "or every occurrence with replace_all; a name is matched as a whole word."
    )
    Params = EditParams
    multiline_params = frozenset({"old", "new"})
    preview_syntax = "diff"

    def preview(self, arguments: dict[str, Any], workspace: Path) -> str:
        """The diff the edit would make, or the replacement itself when it would not apply."""
        path, old, new = arguments.get("path"), arguments.get("old"), arguments.get("new")
        if not isinstance(path, str):
            return super().preview(arguments, workspace)
        current = current_text(workspace, path)
        every = str(arguments.get("replace_all", "")).strip().lower().startswith(("true", "yes", "1"))
        if not (isinstance(old, str) and isinstance(new, str) and old) or current is None:
            return f"edit {path}: replace\n{old}\nwith\n{new}"
        count = len(occurrences(old).findall(current))
        if count != 1 and not (every and count):
            return f"edit {path}: replace\n{old}\nwith\n{new}"
        return diff_preview(path, current, occurrences(old).sub(lambda _: new, current, count=0 if every else 1))

    def run(self, params: EditParams, ctx: ToolContext) -> ToolResult:
        if not params.old:
            raise ToolError("`old` is empty; to create or replace a whole file use write_file")
        if params.old == params.new:
            raise ToolError("`old` and `new` are identical, so nothing would change; write the changed text in `new`")
        if params.path is None:  # a small model's natural rename: `old`, `new`, replace_all, no file named
            return self._edit_each(ctx, params)
        return ToolResult(output=self._edit(ctx, params.path, params), files=[params.path])

    def _edit_each(self, ctx: ToolContext, params: EditParams) -> ToolResult:
        """Every file an edit without `path` is for; one that cannot be edited is named, the others done."""
        done, edited, failed = [], [], []
        for name in self._files_with(ctx, params):
            try:
                done.append(self._edit(ctx, name, params))
                edited.append(name)
            except ToolError as exc:
                failed.append(f"not {name}: {exc}")
        if not done:
            raise ToolError("; ".join(failed))
        return ToolResult(output="; ".join(done + failed), files=edited)

    def _edit(self, ctx: ToolContext, name: str, params: EditParams) -> str:
        refuse_when_read_only(ctx, name)
        path = resolve_inside(ctx.workspace, name, for_write=True)
        text = read_text(path, name)
        if not is_utf8(path):  # writing the decoded text back would replace its undecodable bytes for good
            raise ToolError(f"{name} is not UTF-8 text; edit it with bash (e.g. sed) so its encoding is kept")
        found = list(occurrences(params.old).finditer(text))
        count = len(found)
        if count == 0:
            elsewhere = _found_elsewhere(ctx.workspace, path, params.old)
            if not elsewhere and len(params.new.strip()) > 2 and occurrences(params.new).search(text):  # made twice
                raise ToolError(f"`old` text was not found in {name}, and `new` is there: the edit is made already")
            raise ToolError(f"`old` text was not found in {name}.{elsewhere or _nearest_line_hint(text, params.old)}")
        lines = [text[: m.start()].count("\n") + 1 for m in found]
        if count > 1 and not params.replace_all:
            raise ToolError(
                f"`old` text occurs {count} times in {name} (lines {', '.join(map(str, lines))}); "
                "include more surrounding lines so it is unique, or, to change all of them (a rename), "
                "add <replace_all>true</replace_all> to the same edit_file call"
            )
        changed = occurrences(params.old).sub(lambda _: params.new, text, count=0 if params.replace_all else 1)
        write_atomically(ctx.workspace, path, changed)
        where = f"lines {', '.join(map(str, lines))}" if count > 1 else f"line {lines[0]}"
        return f"edited {name} at {where}"

    def _files_with(self, ctx: ToolContext, params: EditParams) -> list[str]:
        """The files an edit without `path` is for: every file with `old` (replace_all), else the only one."""
        pattern = occurrences(params.old)
        found = [relative(ctx.workspace, p) for p in _text_files(ctx.workspace) if pattern.search(_text_of(p))]
        if not found:
            new = occurrences(params.new)
            done = [relative(ctx.workspace, p) for p in _text_files(ctx.workspace) if new.search(_text_of(p))]
            already = f"; `new` is in {', '.join(done[:10])}: the change looks done already" if done else ""
            raise ToolError(f"`old` text was not found in any file of the project{already}")
        if len(found) > 1 and not params.replace_all:
            raise ToolError(
                f"`old` text is in {len(found)} files ({', '.join(found[:10])}); name the file in <path>, or add "
                "<replace_all>true</replace_all> to change it in every one of them (a rename)"
            )
        return found


def current_text(workspace: Path, path: str) -> str | None:
    """The text of a workspace file now, or None when it is absent or cannot be read."""
    try:
        resolved = resolve_inside(workspace, path)
        return read_text(resolved, path) if resolved.is_file() else None
    except (ToolError, OSError, ValueError):
        return None


def diff_preview(path: str, current: str | None, new: str) -> str:
    """The unified diff from `current` (None: no such file) to `new`, cut at MAX_PREVIEW_LINES."""
    diff = difflib.unified_diff(
        (current or "").splitlines(keepends=True),
        new.splitlines(keepends=True),
        fromfile=f"a/{path}" if current is not None else "/dev/null",
        tofile=f"b/{path}",
    )
    lines = [line if line.endswith("\n") else line + "\n" for line in diff]
    if len(lines) > MAX_PREVIEW_LINES:
        lines = lines[:MAX_PREVIEW_LINES] + [f"[... {len(lines) - MAX_PREVIEW_LINES} more diff lines]\n"]
    return "".join(lines).rstrip("\n") or f"(no change to {path})"


def occurrences(old: str) -> re.Pattern[str]:
    """Where `old` occurs: as a whole word when it is a name (a rename of `total` leaves `subtotal` alone),
    else anywhere."""
    return re.compile(rf"(?<!\w){re.escape(old)}(?!\w)" if old.isidentifier() else re.escape(old))


def _text_files(workspace: Path, most_files: int = 400) -> list[Path]:
    """The project's files a text search looks at: regular, not too big, the first `most_files`."""
    files = []
    for index, path in enumerate(iter_files(workspace, workspace)):
        if index >= most_files:
            break
        if not path.is_symlink() and path.is_file() and path.stat().st_size <= MAX_FILE_BYTES:
            files.append(path)
    return files


def _text_of(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""


def _found_elsewhere(workspace: Path, edited: Path, old: str) -> str:
    """Where a one-line `old` (a name being renamed, say) does occur, when it is not in the file named: a small
    model edits the wrong file of a rename again and again without this."""
    if "\n" in old.strip() or not old.strip():
        return ""
    places: list[str] = []
    for path in _text_files(workspace):
        if len(places) >= 5:
            break
        lines = [str(n) for n, line in enumerate(_text_of(path).splitlines(), start=1) if old in line]
        if lines and path != edited:
            places.append(f"{relative(workspace, path)} (line{'s' if len(lines) > 1 else ''} {', '.join(lines[:5])})")
    return f" It occurs in: {'; '.join(places)}." if places else ""


def _nearest_line_hint(text: str, old: str, show_whole_below: int = 80) -> str:
    """Help the model retry: where `old` starts to differ from the file, and a short file whole. A small model
    that already rewrote a file edits it again with the text it first saw: the file as it now is ends that."""
    lines, wanted = text.splitlines(), [ln.strip() for ln in old.strip("\n").splitlines()]
    hint = " Copy `old` exactly from the file (use read_file to see it)."
    for start, line in enumerate(lines):
        if wanted and line.strip() == wanted[0]:
            differs = [k for k, w in enumerate(wanted) if start + k >= len(lines) or lines[start + k].strip() != w]
            if not differs:
                hint = f" Its lines appear from line {start + 1} with other indentation; copy the spaces exactly."
                break
            same = differs[0]
            actual = lines[start + same].strip() if start + same < len(lines) else "(the end of the file)"
            hint = (
                f" Its first line appears at line {start + 1}, but its line {same + 1} differs from the file's line "
                f"{start + same + 1}: the file has {actual!r}, `old` has {wanted[same]!r}."
            )
            break
    if len(lines) < show_whole_below:
        return f"{hint} The file currently reads:\n{text}"
    return hint


class ListParams(BaseModel):
    path: str = Field(default=".", description="Folder to list, relative to the project root.")


class ListFilesTool(Tool):
    name = "list_files"
    description = "List files under a folder recursively (respects .gitignore)."
    Params = ListParams
    read_only = True
    max_entries = 300

    def run(self, params: ListParams, ctx: ToolContext) -> ToolResult:
        folder = resolve_inside(ctx.workspace, params.path)
        if not folder.is_dir():
            raise ToolError(f"{params.path} is not a folder")
        files = [relative(ctx.workspace, p) for p in iter_files(ctx.workspace, folder)]
        if not files:
            return ToolResult(output=f"no files under {params.path}")
        shown = files[: self.max_entries]
        more = f"\n[... {len(files) - len(shown)} more files]" if len(files) > len(shown) else ""
        return ToolResult(output="\n".join(shown) + more)


class SearchParams(BaseModel):
    pattern: str = Field(description="Python regular expression searched line by line.")
    path: str = Field(default=".", description="Folder or file to search in.")


class SearchTool(Tool):
    name = "search"
    description = "Search files for a regular expression (respects .gitignore); returns path:line: text."
    Params = SearchParams
    read_only = True
    max_matches = 100

    def run(self, params: SearchParams, ctx: ToolContext) -> ToolResult:
        """Uses the `regex` engine: it avoids most catastrophic backtracking, and a deadline stops the rest."""
        try:
            pattern = regex.compile(params.pattern)
        except (regex.error, OverflowError, RecursionError) as exc:  # a{99999999999}; thousands of nested groups
            raise ToolError(f"invalid regular expression {params.pattern[:200]!r}: {exc}") from None
        deadline = time.monotonic() + SEARCH_SECONDS
        root = resolve_inside(ctx.workspace, params.path)
        candidates = [root] if root.is_file() else iter_files(ctx.workspace, root)
        matches: list[str] = []
        for file in candidates:
            try:
                text = read_text(file, relative(ctx.workspace, file))
            except ToolError:
                continue  # binary or huge files are skipped
            for number, line in enumerate(text.splitlines(), start=1):
                try:
                    found = pattern.search(line, timeout=max(deadline - time.monotonic(), 0.001))
                except TimeoutError:
                    raise ToolError(
                        f"the search took longer than {SEARCH_SECONDS:.0f} s ({len(matches)} matches so far); "
                        "use a simpler pattern (fewer nested repeats like (a+)+) or a narrower path"
                    ) from None
                if found:
                    matches.append(f"{relative(ctx.workspace, file)}:{number}: {line[:300]}")
                    if len(matches) >= self.max_matches:
                        return ToolResult(
                            output="\n".join(matches) + "\n[... more matches not shown; narrow the search]"
                        )
        return ToolResult(output="\n".join(matches) if matches else f"no matches for {params.pattern!r}")


def file_tools() -> list[Tool]:
    return [ReadFileTool(), WriteFileTool(), EditFileTool(), ListFilesTool(), SearchTool()]
