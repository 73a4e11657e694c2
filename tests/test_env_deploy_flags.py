"""`env deploy`'s flags are declared once (app.cli.env_deploy_ops.FLAGS): the Typer command, the fast
parser and the DeployOptions a deploy runs with are read from it, so they cannot disagree
(docs/reference-deploy.md#env-deploy: flags and their defaults)."""

from __future__ import annotations

from typing import Any

import typer

from app.cli import env_deploy  # noqa: F401 - registers `env deploy` on the env group
from app.cli.env_deploy_ops import DEFAULTS, FLAGS, OPTIONS, deploy_options
from app.cli.env_group import app
from app.cli.fast_args import parse
from engine.deploy.deployment import DeployOptions


def _deploy_command() -> Any:
    """The click command Typer builds (Typer carries its own click: compared by duck type)."""
    return typer.main.get_command(app).commands["deploy"]  # type: ignore[attr-defined]


def test_the_typer_command_lists_every_flag_as_declared():
    """docs/reference-deploy.md#env-deploy: every declared flag is an ordinary click option of `env deploy`
    (names, default, help), and the command has no option the declaration does not hold."""
    params = {p.name: p for p in _deploy_command().params}
    assert [p.name for p in _deploy_command().params if p.param_type_name == "argument"] == ["env", "version"]
    options = {name: p for name, p in params.items() if p.param_type_name == "option"}
    assert sorted(options) == sorted(f.param for f in FLAGS)
    for f in FLAGS:
        opt = options[f.param]
        assert sorted(opt.opts + opt.secondary_opts) == sorted(f.names), f.param
        assert opt.is_flag == (f.kind is bool), f.param
        assert opt.multiple == (f.kind is list), f.param
        assert (list(opt.default) if f.kind is list else opt.default) == f.default, f.param
        if f.help is not None:
            assert opt.help == f.help, f.param


def test_fast_parser_and_deploy_options_follow_the_declaration():
    """docs/reference-deploy.md#env-deploy: the fast parser reads each flag's names and kind, and with no
    flag a deploy runs with DeployOptions' own defaults (--wait by default, no codes acknowledged)."""
    assert set(OPTIONS) == {n for f in FLAGS for n in f.names}
    positional, params = parse(["staging", "v1", "-y", "--target", "api", "--target", "web", "--timeout", "5",
                                "--acknowledge-destructive", "workload_removed, x", "--no-wait", "--gate", "g.json"],
                               OPTIONS, DEFAULTS)
    assert positional == ["staging", "v1"]
    opts = DeployOptions(version="v1", **deploy_options(params))
    assert opts.yes and opts.targets == ["api", "web"] and opts.timeout == 5.0 and opts.gate_file == "g.json"
    assert opts.acknowledge_destructive == ["workload_removed", "x"] and opts.wait is False
    assert DeployOptions(**deploy_options(dict(DEFAULTS))) == DeployOptions()
    fields = {f.field or f.param for f in FLAGS if f.field is not None}
    assert fields == set(DeployOptions.model_fields) - {"version"}
