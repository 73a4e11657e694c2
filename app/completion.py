"""Shell completion for both programs (README.md#progress-and-shell-completion), answered without Typer.

The protocol is click's, so the scripts are the ones bash, zsh and fish users know from click tools:
the shell runs the program with `_FRAMEWORK_COMPLETE` (or `_PLATFORM_COMPLETE`) set to
`bash_complete`, `zsh_complete` or `fish_complete`, the command line in `COMP_WORDS` and the cursor's
word in `COMP_CWORD`; the program prints the candidates and exits 0. `<shell>_source` (or
`framework completion <shell>`) prints the script to install. Candidates come from the generated
command tree (app/completion_table.py): subcommands, flags, and the environment names under the
project's deploy/kcl/ where a command takes an environment. Standard library only: completion runs on
every <TAB>.
"""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

SHELLS = ("bash", "zsh", "fish")
Candidate = tuple[str, str, str]  # (type: plain | file | dir, value, help)

BASH = """\
_%(func)s_completion() {
    local IFS=$'\\n'
    local response

    response=$(env COMP_WORDS="${COMP_WORDS[*]}" COMP_CWORD=$COMP_CWORD %(var)s=bash_complete $1)

    for completion in $response; do
        IFS=',' read type value <<< "$completion"

        if [[ $type == 'dir' ]]; then
            COMPREPLY=()
            compopt -o dirnames
        elif [[ $type == 'file' ]]; then
            COMPREPLY=()
            compopt -o default
        elif [[ $type == 'plain' ]]; then
            COMPREPLY+=($value)
        fi
    done

    return 0
}

complete -o nosort -F _%(func)s_completion %(prog)s
"""

ZSH = """\
#compdef %(prog)s

_%(func)s_completion() {
    local -a completions
    local -a completions_with_descriptions
    local -a response
    (( ! $+commands[%(prog)s] )) && return 1

    response=("${(@f)$(env COMP_WORDS="${words[*]}" COMP_CWORD=$((CURRENT-1)) %(var)s=zsh_complete %(prog)s)}")

    for type key descr in ${response}; do
        if [[ "$type" == "plain" ]]; then
            if [[ "$descr" == "_" ]]; then
                completions+=("$key")
            else
                completions_with_descriptions+=("$key":"$descr")
            fi
        elif [[ "$type" == "dir" ]]; then
            _path_files -/
        elif [[ "$type" == "file" ]]; then
            _path_files -f
        fi
    done

    if [ -n "$completions_with_descriptions" ]; then
        _describe -V unsorted completions_with_descriptions -U
    fi

    if [ -n "$completions" ]; then
        compadd -U -V unsorted -a completions
    fi
}

if [[ $zsh_eval_context[-1] == loadautofunc ]]; then
    _%(func)s_completion "$@"
else
    compdef _%(func)s_completion %(prog)s
fi
"""

FISH = """\
function _%(func)s_completion;
    set -l response (env %(var)s=fish_complete COMP_WORDS=(commandline -cp) COMP_CWORD=(commandline -t) %(prog)s);

    for completion in $response;
        set -l metadata (string split "," $completion);

        if test $metadata[1] = "dir";
            __fish_complete_directories $metadata[2];
        else if test $metadata[1] = "file";
            __fish_complete_path $metadata[2];
        else if test $metadata[1] = "plain";
            echo $metadata[2];
        end;
    end;
end;

complete --no-files --command %(prog)s --arguments "(_%(func)s_completion)";
"""


def env_var(program: str) -> str:
    return f"_{program.upper()}_COMPLETE"


def script(program: str, shell: str) -> str:
    """The completion script of `program` for `shell` (one of SHELLS)."""
    template = {"bash": BASH, "zsh": ZSH, "fish": FISH}[shell]
    return template % {"prog": program, "func": program, "var": env_var(program)}


def _split(line: str) -> list[str]:
    """Words of a partial command line as the shell would pass them; an open quote ends the last word."""
    lex = shlex.shlex(line, posix=True)
    lex.whitespace_split = True
    lex.commenters = ""
    words: list[str] = []
    try:
        words.extend(lex)
    except ValueError:
        words.append(lex.token)
    return words


def environment_names(start: Path | None = None) -> list[str]:
    """The environments declared under deploy/kcl/<env>/main.k of the project around `start` (the cwd)."""
    here = (start or Path.cwd()).resolve()
    for root in (here, *here.parents):
        if (root / "framework.yaml").is_file():
            kcl = root / "deploy" / "kcl"
            try:
                return sorted(p.parent.name for p in kcl.glob("*/main.k"))
            except OSError:
                return []
    return []


def _values(kind: str, incomplete: str) -> list[Candidate]:
    kind = kind.rstrip("*")
    if kind == "env":
        return [("plain", name, "environment") for name in environment_names() if name.startswith(incomplete)]
    if kind == "shell":
        return [("plain", name, "") for name in SHELLS if name.startswith(incomplete)]
    if kind == "path":
        return [("file", incomplete, "")]
    return []


def complete(program: str, args: list[str], incomplete: str) -> list[Candidate]:
    """The candidates for the word `incomplete` after `args` (the words between the program and it)."""
    from app.completion_table import ARGUMENTS, COMMANDS, FLAGS

    if program == "platform" and args[:1] == ["framework"]:
        program, args = "framework", args[1:]  # `platform framework ...` is the framework program
    path, positional, i = program, 0, 0
    while i < len(args):
        word = args[i]
        children = dict(COMMANDS.get(path, ()))
        if word.startswith("-") and word != "-":
            takes = _takes(FLAGS.get(path, ()), word)
            if takes and "=" not in word:
                i += 1  # the option's value
        elif word in children and positional == 0:
            path = f"{path} {word}"
        else:
            positional += 1
        i += 1
    flags = FLAGS.get(path, ())
    if args and "=" not in args[-1] and args[-1].startswith("-"):
        kind = _takes(flags, args[-1])
        if kind:
            return _values(kind, incomplete)
    if incomplete.startswith("-"):
        names = [f.split("=", 1)[0] for f in flags]
        return [("plain", n, "") for n in names if n.startswith(incomplete)]
    children = COMMANDS.get(path, ())
    if children and positional == 0:
        return [("plain", name, text) for name, text in children if name.startswith(incomplete)]
    kinds = ARGUMENTS.get(path, ())
    if kinds:
        kind = kinds[positional] if positional < len(kinds) else (kinds[-1] if kinds[-1].endswith("*") else "")
        return _values(kind, incomplete)
    return []


def _takes(flags: tuple[str, ...], word: str) -> str:
    """The value kind of option `word` ("" for a flag or an unknown option)."""
    name = word.split("=", 1)[0]
    for flag in flags:
        option, _, kind = flag.partition("=")
        if option == name:
            return kind
    return ""


def _format(shell: str, candidates: list[Candidate]) -> str:
    if shell == "zsh":
        rows = [f"{kind}\n{value.replace(':', chr(92) + ':')}\n{text or '_'}" for kind, value, text in candidates]
    elif shell == "fish":
        rows = [f"{kind},{value}" + (f"\t{text}" if text else "") for kind, value, text in candidates]
    else:
        rows = [f"{kind},{value}" for kind, value, _ in candidates]
    return "".join(row + "\n" for row in rows)


def answer(program: str, instruction: str) -> int:
    """Answer one completion request (`instruction` = the value of `_<PROGRAM>_COMPLETE`); exit code."""
    shell, _, action = instruction.partition("_")
    if shell not in SHELLS or action not in ("complete", "source"):
        sys.stderr.write(f"error: {env_var(program)}={instruction!r}: expected <bash|zsh|fish>_<complete|source>\n")
        return 2
    if action == "source":
        sys.stdout.write(script(program, shell))
        return 0
    words = _split(os.environ.get("COMP_WORDS", ""))
    if shell == "fish":
        incomplete = os.environ.get("COMP_CWORD", "")
        args = words[1:]
        if incomplete and args and args[-1] == incomplete:
            args.pop()
    else:
        try:
            cword = int(os.environ.get("COMP_CWORD", ""))
        except ValueError:
            cword = len(words)
        args = words[1:cword]
        incomplete = words[cword] if 0 <= cword < len(words) else ""
    sys.stdout.write(_format(shell, complete(program, args, incomplete)))
    return 0
