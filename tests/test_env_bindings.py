"""`env new --bind <name>=<binder>` bindings are read: `env up` refuses them, `env render`, `env shape`
and `env config` show them, and `env deploy` honours or refuses each (docs/reference-env.md#bindings),
with the real `framework` script on a git copy of the demo."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from deploy_fixtures import demo_fixture  # noqa: E402,F401


def _bind(demo, env: str, bindings: str) -> None:
    path = demo.root / "deploy" / "kcl" / env / "main.k"
    text = path.read_text().rstrip()
    assert text.endswith("}")
    path.write_text(text[:-1] + f"    bindings = {{{bindings}}}\n}}\n")
    demo.commit(f"{env}: bindings")


def test_env_up_refuses_an_environment_with_bindings_pointing_to_env_deploy(demo):
    """docs/reference-env.md#bindings (spec's `env up`: local only, non-local bindings refused, pointing to
    `env deploy`): a local environment created with `--bind web=cluster` is refused (exit 1, not_local)
    before any port block is taken or process started."""
    demo.run("env", "new", "loc", "--from", "dev", "--bind", "web=cluster", check=True)
    assert 'binder = "cluster"' in (demo.root / "deploy" / "kcl" / "loc" / "main.k").read_text()
    demo.commit("loc")
    try:
        code, doc = demo.json("env", "up", "loc", "--no-build")
        assert code == 1, doc
        assert doc["error"]["code"] == "not_local" and "web=cluster" in doc["error"]["message"]
        assert doc["error"]["hint"] == "deploy it with: framework env deploy loc"
        code, ps = demo.json("env", "ps")
        assert code == 0 and ps["stacks"] == []
        assert not (demo.root / ".framework" / "blocks.json").exists() or '"loc"' not in (
            demo.root / ".framework" / "blocks.json").read_text()
    finally:
        demo.run("env", "down", "loc")


def test_render_shape_and_config_show_bindings_and_what_a_deploy_does(demo):
    """docs/reference-env.md#bindings: each binding is shown by `env render` (a `# binding:` comment and
    `bindings` in --json), `env shape` and `env config`, with what `env deploy` does with it."""
    demo.run("env", "new", "qa", "--from", "staging", "--bind", "api=hosted", check=True)
    demo.commit("qa")
    refused = ("refused: this environment is not converged by a control plane (declare kind = \"hosted\" "
               "with a framework.ControlPlane)")
    render = demo.run("env", "render", "qa", check=True).stdout
    assert render.startswith(f"# binding: api -> hosted; env deploy: {refused}\n# cluster: local\n")
    code, doc = demo.json("env", "render", "qa")
    assert code == 0 and doc["bindings"] == [{"name": "api", "binder": "hosted", "bucket": None, "deploy": refused}]
    code, shape = demo.json("env", "shape", "qa")
    assert code == 0 and shape["shape"]["bindings"] == doc["bindings"]
    assert f"binding: api -> hosted; env deploy: {refused}" in demo.run("env", "shape", "qa", check=True).stdout
    code, config = demo.json("env", "config", "qa")
    assert code == 0 and config["bindings"] == doc["bindings"]
    code, config = demo.json("env", "config", "qa", "--workload", "web")
    assert code == 0 and config["bindings"] == []
    code, plain = demo.json("env", "render", "staging")
    assert code == 0 and plain["bindings"] == [] and plain["yaml"].startswith("# cluster: local\n")


def test_deploy_honours_a_binding_only_where_its_runtime_places_it(demo):
    """docs/reference-env.md#bindings: `hosted` is honoured on a control-plane environment, `cluster` on a
    K8sCluster target; a binding the runtime cannot place (hosted on a Process target, bucket anywhere) is
    refused by `env deploy` (exit 1, binding_unsupported) before anything is cut or promoted."""
    demo.run("env", "new", "qa", "--from", "staging", "--bind", "api=hosted", check=True)
    demo.commit("qa")
    code, doc = demo.json("env", "deploy", "qa", "--yes")
    assert code == 1, doc
    assert doc["error"]["code"] == "binding_unsupported"
    assert doc["error"]["message"].startswith("cannot deploy qa: api is bound to hosted, but this environment")
    assert not (demo.root / ".framework" / "releases").exists() or not list(
        (demo.root / ".framework" / "releases").iterdir())
    human = demo.run("env", "deploy", "qa", "--yes")  # the error alone: no plan was read, none is printed
    assert human.returncode == 1 and human.stdout == ""
    assert human.stderr.startswith("error: cannot deploy qa: api is bound to hosted")
    code, ledger = demo.json("ledger", "show", "qa")
    assert code == 0 and ledger["promotions"] == []

    _bind(demo, "cluster", 'api = framework.Binding {binder = "cluster"}')
    code, doc = demo.json("env", "render", "cluster", "--list")
    assert code == 0 and doc["bindings"][0]["deploy"] == "honoured: applied to context k3d-demo"
    _bind(demo, "cloud", 'api = framework.Binding {binder = "hosted"}, '
                         'web = framework.Binding {binder = "bucket", bucket = "demo-assets"}')
    code, doc = demo.json("env", "render", "cloud", "--list")
    assert code == 0
    assert [(b["name"], b["deploy"]) for b in doc["bindings"]] == [
        ("api", "honoured: the control plane runs it"), ("web", "refused: no runtime uploads to a bucket yet")]
    code, doc = demo.json("env", "deploy", "cloud", "v1", "--yes")  # refused before the control plane (else 2)
    assert code == 1 and doc["error"]["code"] == "binding_unsupported"
    assert "web is bound to bucket (demo-assets)" in doc["error"]["message"]
