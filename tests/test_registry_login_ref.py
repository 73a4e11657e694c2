"""`registry login <env>` and `registry ref <env>` (docs/reference-ci.md#commands),
against a real docker-registry with htpasswd users, served on this machine's non-loopback address
(a loopback registry is "local" and skipped by rule)."""

from __future__ import annotations

import base64
import json
import socket
import stat
import sys
from pathlib import Path

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from ci_fixtures import project_fixture  # noqa: E402,F401
from deploy_fixtures import free_port  # noqa: E402
from registry_fixtures import push_image, run_registry  # noqa: E402


def lan_address() -> str:
    """This machine's non-loopback IPv4 address (the route a packet to a documentation address takes)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.connect(("192.0.2.1", 9))
        addr = s.getsockname()[0]
    assert not addr.startswith("127."), "the machine has no non-loopback address for the remote registry"
    return addr


def env_file(project, name: str, images: dict[str, str], extra: str = "") -> None:
    path = project.root / "deploy" / "kcl" / name / "main.k"
    path.parent.mkdir(parents=True, exist_ok=True)
    workloads = "\n".join(f'        framework.Workload {{name = "{w}", image = "{i}"}}' for w, i in images.items())
    path.write_text(f"""import framework

environment = framework.Environment {{
    name = "{name}"
    kind = "self_managed"
    target = framework.K8sCluster {{context = "ctx", namespace = "ns"}}
    {extra}
    workloads = [
{workloads}
    ]
}}
""")


@pytest.fixture
def remote(tmp_path, project):
    """Two registries with users: `ext` (ci / s3cret) and the platform one (framework / the token)."""
    host = lan_address()
    ext, plat = f"{host}:{free_port()}", f"{host}:{free_port()}"
    project.env["FRAMEWORK_INSECURE_REGISTRIES"] = f"{ext},{plat}"  # plain HTTP in the test, as for loopback
    (tmp_path / "ext").mkdir()
    (tmp_path / "plat").mkdir()
    with run_registry(tmp_path / "ext", ext, {"ci": "s3cret"}), \
            run_registry(tmp_path / "plat", plat, {"framework": "cp-token-123"}):
        yield ext, plat


def stored(project) -> dict:
    path = Path(project.env["HOME"]) / ".docker" / "config.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    return json.loads(path.read_text())


def test_login_every_image_host_platform_with_control_plane_credential_local_skipped(project, remote):
    """Logs in to every registry host the images name: the platform registry with the control-plane
    credential, others with --username/--password-env, local ones skipped; stored in docker's
    config.json (0600), which the registry then accepts; the secret never printed."""
    ext, plat = remote
    env_file(project, "staging", {"api": f"{ext}/demo/api:1.0", "web": f"{plat}/demo/web",
                                  "cache": "127.0.0.1:5000/demo/cache"},
             extra=f'control_plane = framework.ControlPlane {{endpoint = "http://127.0.0.1:9", '
                   f'registry_host = "{plat}"}}')
    docker_dir = Path(project.env["HOME"]) / ".docker"
    docker_dir.mkdir()
    (docker_dir / "config.json").write_text(json.dumps({"auths": {"other.test": {"auth": "eDp5"}},
                                                        "credHelpers": {"gcr.io": "gcloud"}}))
    env = {"FRAMEWORK_CONTROL_PLANE_TOKEN": "cp-token-123", "REG_PASS": "s3cret"}
    code, doc = project.json("registry", "login", "staging", "--username", "ci", "--password-env", "REG_PASS",
                             extra_env=env)
    assert code == 0, doc
    assert {h["host"]: (h["status"], h["credential"]) for h in doc["hosts"]} == {
        ext: ("logged_in", "flags"), plat: ("logged_in", "control-plane"), "127.0.0.1:5000": ("skipped_local", None)}
    config = stored(project)
    assert config["credHelpers"] == {"gcr.io": "gcloud"} and "other.test" in config["auths"]  # kept
    for host in (ext, plat):
        user, _, password = base64.b64decode(config["auths"][host]["auth"]).decode().partition(":")
        assert httpx.get(f"http://{host}/v2/", auth=(user, password)).status_code == 200  # what docker/oras send
    assert "127.0.0.1:5000" not in config["auths"]
    proc = project.run("registry", "login", "staging", "--username", "ci", "--password-stdin",
                       input="s3cret\n", extra_env={"FRAMEWORK_CONTROL_PLANE_TOKEN": "cp-token-123"})
    assert proc.returncode == 0, proc.stderr
    assert "s3cret" not in proc.stdout + proc.stderr and "cp-token-123" not in proc.stdout + proc.stderr


def test_refused_credential_or_missing_one_stores_nothing(project, remote):
    """A registry refusing the credential (exit 1) or a host without one (exit 2, usage) stores nothing;
    a registry that cannot be reached exits 2."""
    ext, _ = remote
    env_file(project, "staging", {"api": f"{ext}/demo/api"})
    code, doc = project.json("registry", "login", "staging", "--username", "ci", "--password-env", "P",
                             extra_env={"P": "wrong"})
    assert code == 1 and doc["error"]["code"] == "registry_login_refused"
    assert not (Path(project.env["HOME"]) / ".docker" / "config.json").exists()
    code, doc = project.json("registry", "login", "staging")
    assert code == 2 and ext in doc["error"]["message"]
    code, doc = project.json("registry", "login", "staging", "--username", "ci", "--password-env", "UNSET_VAR")
    assert code == 1 and "UNSET_VAR" in doc["error"]["message"]
    code, doc = project.json("registry", "login", "staging", "--username", "ci", "--password-stdin",
                             "--password-env", "P", extra_env={"P": "x"})
    assert code == 2
    env_file(project, "gone", {"api": f"{lan_address()}:{free_port()}/demo/api"})
    code, doc = project.json("registry", "login", "gone", "--username", "ci", "--password-env", "P",
                             "--timeout", "2", extra_env={"P": "x"})
    assert code == 2 and doc["error"]["code"] == "registry_unreachable"


def test_ref_prints_pushed_image_digests_and_ci_output(project, tmp_path, remote):
    """`registry ref`: `<image>@<digest>` per pushed image (this machine's push record, else the current
    promotion); --image; --ci-output appends ref=, image=, digest= to $GITHUB_OUTPUT."""
    ext, _ = remote
    env_file(project, "staging", {"api": f"{ext}/demo/api", "web": f"{ext}/demo/web"})
    api = push_image(ext, "demo/api", auth=("ci", "s3cret"))
    web = push_image(ext, "demo/web", auth=("ci", "s3cret"))
    code, doc = project.json("registry", "ref", "staging")
    assert code == 1 and doc["error"]["code"] == "no_pushed_image"
    record = Path(project.env["FRAMEWORK_LEDGER_HOME"]) / "projects" / "citest" / "pushes" / "staging.json"
    record.parent.mkdir(parents=True)
    record.write_text(json.dumps({"artifacts": [], "images": {
        "api": {"kind": "oci", "coordinate": f"{ext}/demo/api", "digest": api},
        "web": {"kind": "oci", "coordinate": f"{ext}/demo/web", "digest": web}}}))
    proc = project.run("registry", "ref", "staging")
    assert proc.returncode == 0 and proc.stdout == f"{ext}/demo/api@{api}\n{ext}/demo/web@{web}\n"
    assert httpx.head(f"http://{ext}/v2/demo/api/manifests/{api}", auth=("ci", "s3cret"),
                      headers={"Accept": "application/vnd.oci.image.manifest.v1+json"}).status_code == 200
    out = tmp_path / "gh-output"
    out.write_text("earlier=1\n")
    gh = {"GITHUB_OUTPUT": str(out)}
    code, doc = project.json("registry", "ref", "staging", "--ci-output", extra_env=gh)
    assert code == 2 and "--image" in doc["error"]["hint"]
    code, doc = project.json("registry", "ref", "staging", "--image", "api", "--ci-output", extra_env=gh)
    assert code == 0 and doc["ci_output"] == str(out)
    assert out.read_text() == f"earlier=1\nref={ext}/demo/api@{api}\nimage={ext}/demo/api\ndigest={api}\n"
    code, doc = project.json("registry", "ref", "staging", "--image", "api", "--ci-output")
    assert code == 2 and "GITHUB_OUTPUT" in doc["error"]["message"]
    code, doc = project.json("registry", "ref", "staging", "--image", "nope")
    assert code == 1


def test_ref_falls_back_to_the_current_promotion(project, remote):
    """Without a push record, the images the environment's current promotion froze."""
    ext, _ = remote
    env_file(project, "prod", {"api": f"{ext}/demo/api"})
    digest = push_image(ext, "demo/api", auth=("ci", "s3cret"))
    code = ("from engine.ledger.store import Ledger\nwith Ledger.open('citest') as l:\n"
            f"    l.append_promotion('prod', 'v1', {{'api': {{'kind': 'oci', 'coordinate': '{ext}/demo/api:1',"
            f" 'digest': '{digest}'}}}}, direction='AHEAD', expected_current=None)\n")
    import subprocess

    subprocess.run([sys.executable, "-c", code], env=project.env, check=True, cwd=Path(__file__).parent.parent)
    code_, doc = project.json("registry", "ref", "prod")
    assert code_ == 0 and doc["source"] == "promotion" and doc["images"][0]["ref"] == f"{ext}/demo/api@{digest}"
