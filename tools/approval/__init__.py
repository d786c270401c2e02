"""Which tool calls may run: the approval policy, applied to every call in `Toolbox.run`.

Modes:
- `auto` (the default, for headless runs): everything runs except what a deny rule names and commands that
  are destructive or cannot be checked, which are refused.
- `ask`: commands, file writes and edits and MCP tools are shown to a person (the exact command, or the
  diff, with hidden characters made visible) and run only after a yes; allow rules skip the question, deny
  rules and "no terminal" refuse.
- `never-ask`: nobody is asked; a call runs only when an allow rule covers it (or the tool is `read_only`).

Rules are strings in the `allow` and `deny` lists; deny wins over allow:
- `mcp:SERVER`: every tool of that MCP server, by the server's name (`mcp:time` covers `time`, not `time_`).
- `tool:NAME`: a tool by name, `*`/`?` globs allowed (`tool:write_file`, `tool:release__*`).
- `cmd:PREFIX`: bash commands whose words start with these words (`cmd:python -m pytest`, `cmd:npm run *`).
- a bare rule: several words are a command prefix (`git status`); one word names a tool and also a
  command's first word (`write_file`, `release__*`, `pytest`).
A compound command (`a && b | c; $(d)`) is allowed by rules only when every simple command in it is;
it is denied when any one of them is.

Destructive commands, and commands whose program, destructive options or targets the analysis cannot know
(built from variables or substitutions, abbreviated, generated, unparseable, too big), never run without a
person: refused in `auto` and `never-ask`, asked in `ask`, whatever the allow rules say. The analysis
(analysis.py) parses with tree-sitter-bash and fails closed. It guards against accidents and tricks on the
command line; it is not a sandbox (a script file the model wrote can still do anything the sandbox allows).

Modules: policy (modes, rules applied, asking), rules (rule matching), analysis (its bounds and result),
walker (the walk over the parse), redirects (redirections and heredocs), folders (`cd` followed), bash_syntax
(the parse, its node types and word values), braces (brace expansion), wrappers (`sudo`, `env`,
`xargs`...), calls (what a simple command is), dangers (what programs do: the dispatch), file_dangers,
interpreters and git_dangers (what file operations, code runners and git do), git_config (which git settings
run a program), options (getopt-style options), paths (where paths point), code_check (inline interpreter
code), preview (hidden characters made visible in what a person sees). What a call is (its command, whether it is read-only, its preview) each tool declares
itself (tools/base.py `Tool`).
"""

from tools.approval.analysis import Analysis, analyse_command
from tools.approval.calls import Danger
from tools.approval.policy import (
    ADVICE,
    ApprovalPolicy,
    ApprovalRequest,
    Approver,
    Ask,
    Decision,
    Mode,
    Verdict,
)
from tools.preview import visible

__all__ = [
    "ADVICE",
    "Analysis",
    "ApprovalPolicy",
    "ApprovalRequest",
    "Approver",
    "Ask",
    "Danger",
    "Decision",
    "Mode",
    "Verdict",
    "analyse_command",
    "visible",
]
