"""``env:`` values that look secret are ``***`` in what cloudtrain prints (dry-run text and JSON, both
clouds and a local run), with one warning pointing at ``secrets:``; the request itself keeps them.
``--show-secrets`` shows them on a terminal only."""

from __future__ import annotations

import json
import shutil

import pytest

from tests.cli.conftest import on_terminal
from tests.conftest import REPO

ENV = {
    "WANDB_API_KEY": "0123456789abcdef0123",  # the name says secret
    "MY_VAR": "AKIAIOSFODNN7EXAMPLE",  # the value is an AWS access key id
    "HF": "hf_abcdefghijklmnopqrstuvwxyz0123456789",  # a Hugging Face token
    "TF_CPP_MIN_LOG_LEVEL": "1",  # nothing secret
}
CLOUDS = {
    "vertex": "backend: vertex\nregion: us-central1\nproject: my-project\nstaging_bucket: gs://my-bucket\n"
    "machine: {type: n1-standard-4}\n",
    "sagemaker": "backend: sagemaker\nregion: us-east-1\nrole_arn: arn:aws:iam::123456789012:role/R\n"
    "staging_bucket: s3://my-bucket\nmachine: {type: ml.m5.xlarge}\n",
}


def _config(tmp_path, cloud: str, env: dict[str, str] = ENV) -> str:
    shutil.copytree(REPO / "tests" / "packages" / "mini_trainer", tmp_path / "mini_trainer")
    lines = "".join(f"  {k}: '{v}'\n" for k, v in env.items())
    path = tmp_path / "job.yaml"
    path.write_text(
        f"name: demo\n{CLOUDS[cloud]}package: {{path: mini_trainer, module: mini_trainer.task}}\nenv:\n{lines}"
    )
    return str(path)


def _env_of(request: dict) -> dict[str, str]:
    if "Environment" in request:
        return request["Environment"]
    return {e["name"]: e["value"] for e in request["jobSpec"]["workerPoolSpecs"][0]["pythonPackageSpec"]["env"]}


@pytest.mark.parametrize("cloud", sorted(CLOUDS))
def test_dry_run_json_and_text_mask_secret_looking_values_with_one_warning(cli, tmp_path, cloud):
    config = _config(tmp_path, cloud)
    done = cli("submit", config, "--dry-run", "-o", "json")
    assert done.returncode == 0, done.stderr
    env = _env_of(json.loads(done.stdout)["request"])
    assert {k: env[k] for k in ENV} == {
        "WANDB_API_KEY": "***",
        "MY_VAR": "***",
        "HF": "***",
        "TF_CPP_MIN_LOG_LEVEL": "1",
    }
    warnings = [line for line in done.stderr.splitlines() if "look like secrets" in line]
    assert warnings == [
        "warning: env: WANDB_API_KEY, MY_VAR, HF look like secrets: env: values are written into the "
        "job's request, where anyone who can read jobs sees them (cloudtrain shows them as ***); "
        "refer to them under secrets: instead (docs/how-to/secrets.md)"
    ]
    text = cli("submit", config, "--dry-run")
    assert text.returncode == 0, text.stderr
    for value in ENV.values():
        if value != "1":
            assert value not in text.stdout + text.stderr


def test_the_request_sent_keeps_the_values(tmp_path):
    """Masking is for display: what submit sends is the render, env: as written."""
    from cloudtrain.app.prepare import build_package, load_spec
    from cloudtrain.backends import get_backend

    loaded, spec = load_spec(_config(tmp_path, "sagemaker"), ())
    request = get_backend("sagemaker").render(spec, build_package(spec))
    assert {k: request["Environment"][k] for k in ENV} == ENV


def test_local_dry_run_masks_the_values_inside_cluster_spec_too(cli, tmp_path):
    done = cli("submit", _config(tmp_path, "vertex"), "--local", "--dry-run", "-o", "json", timeout=600)
    assert done.returncode == 0, done.stderr
    for value in ("0123456789abcdef0123", "AKIAIOSFODNN7EXAMPLE", "hf_abcdefghijklmnopqrstuvwxyz0123456789"):
        assert value not in done.stdout


def test_show_secrets_is_refused_with_json_or_a_pipe(cli, tmp_path):
    config = _config(tmp_path, "vertex")
    as_json = cli("submit", config, "--dry-run", "--show-secrets", "-o", "json")
    assert as_json.returncode == 2 and as_json.stdout == ""
    assert as_json.stderr.strip().splitlines()[-1].startswith("error: --show-secrets is refused with -o json")
    piped = cli("submit", config, "--dry-run", "--show-secrets")
    assert piped.returncode == 2 and "--show-secrets is refused with output that is not a terminal" in piped.stderr


def test_show_secrets_shows_them_on_a_terminal(tmp_path):
    config = _config(tmp_path, "vertex")
    shown = on_terminal("submit", config, "--dry-run", "--show-secrets", columns=200)
    assert "AKIAIOSFODNN7EXAMPLE" in shown
    assert "AKIAIOSFODNN7EXAMPLE" not in on_terminal("submit", config, "--dry-run", columns=200)


def test_dollar_brace_value_warns_and_points_at_secrets(cli, tmp_path):
    done = cli("submit", _config(tmp_path, "vertex", {"REGION_NAME": "${MY_REGION}"}), "--dry-run", "-o", "json")
    assert done.returncode == 0
    assert (
        "warning: env: REGION_NAME: '${MY_REGION}' is sent as written (cloudtrain does not expand ${…}); for a "
        "value from your shell or a secret store use secrets: (REGION_NAME: shell:MY_REGION for --local; "
        "docs/how-to/secrets.md)"
    ) in done.stderr.splitlines()


def test_submit_include_packages_a_credential_like_file_with_a_warning(cli, tmp_path):
    config = _config(tmp_path, "vertex", {"A": "1"})
    (tmp_path / "mini_trainer" / "kubeconfig").write_text("apiVersion: v1\n")
    left = cli("submit", config, "--dry-run", "-o", "json")
    assert {"path": "mini_trainer/kubeconfig", "why": "credential-like"} in json.loads(left.stdout)["package"][
        "left_out"
    ]
    kept = cli("submit", config, "--dry-run", "-o", "json", "--include", "kubeconfig")
    assert kept.returncode == 0, kept.stderr
    import tarfile

    package = json.loads(kept.stdout)["package"]
    assert package["left_out"] == []
    with tarfile.open(package["file"]) as tar:
        assert "mini_trainer-0.0.0/mini_trainer/kubeconfig" in tar.getnames()
    assert [line for line in kept.stderr.splitlines() if "packaged credential-like files" in line] == [
        "warning: packaged credential-like files: mini_trainer/kubeconfig (--include kubeconfig) — whoever can read "
        "the staging bucket or the job's package can read them; refer to secrets under secrets: instead "
        "(docs/how-to/secrets.md)"
    ]


def test_the_summary_names_each_secret_by_its_reference(cli, tmp_path):
    config = _config(tmp_path, "vertex", {"A": "1"})
    with open(config, "a") as f:
        f.write("secrets:\n  HF_TOKEN: gcp:projects/my-project/secrets/hf-token/versions/latest\n")
    done = cli("submit", config, "--dry-run")
    assert done.returncode == 0, done.stderr
    row = next(line for line in done.stdout.splitlines() if line.lstrip().startswith("secrets"))
    assert row.split(None, 1)[1] == "HF_TOKEN ← gcp:projects/my-project/secrets/hf-token/versions/latest"
