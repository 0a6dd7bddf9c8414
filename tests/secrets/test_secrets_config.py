"""``secrets:`` in a config: the issue's form loads as written, every bad reference is one line
naming the file, key and fix, and where a kind cannot be read it says what to write instead."""

from __future__ import annotations

import pytest

from cloudtrain.config.load import load_config
from cloudtrain.errors import ConfigError
from tests.conftest import SAGEMAKER_BASE, VERTEX_BASE

ISSUE_FORM = """\
secrets:
  WANDB_API_KEY: shell:WANDB_API_KEY
  HF_TOKEN: gcp:projects/my-project/secrets/hf-token/versions/latest
  DB_PASSWORD: aws:arn:aws:secretsmanager:us-east-1:123456789012:secret:db-AbCdEf
"""
SLURM_BASE = """\
name: demo
backend: slurm
slurm:
  workdir: /fsx/cloudtrain
machine:
  accelerator_count: 0
package:
  path: trainer
  module: trainer.task
"""


def error_of(path, *overrides, **kwargs) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        load_config(path, overrides, **kwargs)
    return info.value


def test_the_issue_form_loads_as_written_for_a_local_run(project):
    cfg = load_config(project(VERTEX_BASE + ISSUE_FORM), local=True).config
    assert dict(cfg.secrets) == {
        "WANDB_API_KEY": "shell:WANDB_API_KEY",
        "HF_TOKEN": "gcp:projects/my-project/secrets/hf-token/versions/latest",
        "DB_PASSWORD": "aws:arn:aws:secretsmanager:us-east-1:123456789012:secret:db-AbCdEf",
    }


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("hunter2", "a secret is a reference, one of shell:WANDB_API_KEY, gcp:"),
        ("shell:MY-KEY", "write shell:NAME"),
        ("gcp:projects/my-project/secrets/hf-token", "(add /versions/latest)"),
        ("gcp:projects/p/secrets/s/versions/0", "write gcp:projects/PROJECT/secrets/SECRET/versions/latest"),
        ("aws:db-password", "write aws: and the secret's full ARN"),
    ],
)
def test_a_value_that_is_not_a_reference_is_refused_at_its_line(project, value, says):
    error = error_of(project(VERTEX_BASE + f"secrets:\n  HF_TOKEN: '{value}'\n"), local=True)
    assert error.field == "secrets.HF_TOKEN" and error.line == 14
    assert says in str(error)
    assert error.exit_code == 2


def test_shell_reference_on_vertex_prints_the_command_and_the_reference_to_write(project):
    error = error_of(project(VERTEX_BASE + "secrets:\n  WANDB_API_KEY: shell:WANDB_API_KEY\n"))
    assert error.field == "secrets.WANDB_API_KEY"
    assert (
        'printf %s "$WANDB_API_KEY" | gcloud secrets create wandb-api-key --project my-project '
        "--replication-policy automatic --data-file=-"
    ) in str(error)
    assert error.hint == "then write WANDB_API_KEY: gcp:projects/my-project/secrets/wandb-api-key/versions/latest"


def test_shell_reference_on_sagemaker_prints_the_command_and_the_reference_to_write(project):
    error = error_of(project(SAGEMAKER_BASE + "secrets:\n  HF_TOKEN: shell:HF_TOKEN\n"))
    assert (
        'aws secretsmanager create-secret --region us-east-1 --name hf-token --secret-string "$HF_TOKEN" '
        "--query ARN --output text"
    ) in str(error)
    assert error.hint is not None
    assert error.hint.startswith("then write HF_TOKEN: aws:<the ARN it prints, arn:aws:secretsmanager:us-east-1:")


def test_each_cloud_reads_its_own_store(project):
    error = error_of(
        project(VERTEX_BASE + "secrets:\n  DB: aws:arn:aws:secretsmanager:us-east-1:123456789012:secret:d\n")
    )
    assert "a vertex job reads secrets from Secret Manager (gcp:)" in str(error)
    error = error_of(project(SAGEMAKER_BASE + "secrets:\n  T: gcp:projects/p/secrets/s/versions/latest\n"))
    assert "a sagemaker job reads secrets from Secrets Manager (aws:)" in str(error)


@pytest.mark.parametrize(
    "ref", ["gcp:projects/p/secrets/s/versions/latest", "aws:arn:aws:secretsmanager:us-east-1:123456789012:secret:d"]
)
def test_slurm_refuses_a_cloud_store_reference_in_one_line(project, ref):
    error = error_of(project(SLURM_BASE + f"secrets:\n  HF_TOKEN: {ref}\n"))
    assert error.field == "secrets.HF_TOKEN"
    assert f"{ref}: a slurm job reads secrets as shell:NAME, from the shell where its jobs are submitted" in str(error)
    assert error.hint == "export the value there and write HF_TOKEN: shell:NAME"
    assert error.exit_code == 2


def test_slurm_takes_a_shell_reference(project):
    cfg = load_config(project(SLURM_BASE + "secrets:\n  HF_TOKEN: shell:HF_TOKEN\n")).config
    assert dict(cfg.secrets) == {"HF_TOKEN": "shell:HF_TOKEN"}


def test_container_jobs_refuse_secrets_saying_why(project):
    text = VERTEX_BASE.replace("package:\n  path: trainer\n  module: trainer.task\n", "") + (
        "container:\n  image_uri: us-docker.pkg.dev/p/r/img:1\n"
        "secrets:\n  T: gcp:projects/p/secrets/s/versions/latest\n"
    )
    error = error_of(project(text))
    assert error.field == "secrets"
    assert "a container: job runs your image as it is" in str(error)


def test_a_name_in_env_and_secrets_is_refused(project):
    error = error_of(project(VERTEX_BASE + "env:\n  T: x\nsecrets:\n  T: gcp:projects/p/secrets/s/versions/latest\n"))
    assert error.field == "secrets.T" and "set in env: too" in str(error)


def test_yaml_env_tag_is_refused_pointing_at_secrets(project):
    error = error_of(project(VERTEX_BASE + "env:\n  API_KEY: !env MY_KEY\n"))
    assert error.line == 14
    assert "!env" in str(error) and "secrets:" in str(error)
    assert "API_KEY: shell:MY_KEY" in str(error)


def test_fallback_candidates_and_sweeps_keep_the_secrets(project):
    from cloudtrain.spec import build_spec

    text = VERTEX_BASE + (
        "secrets:\n  HF_TOKEN: gcp:projects/p/secrets/s/versions/latest\n"
        "fallback:\n  - region: us-east1\n"
        "sweep:\n  metric: acc\n  params: {lr: {min: 0.001, max: 0.1}}\n"
    )
    loaded = load_config(project(text))
    (candidate,) = loaded.candidates
    assert dict(build_spec(candidate).secrets) == {"HF_TOKEN": "gcp:projects/p/secrets/s/versions/latest"}
    assert dict(build_spec(loaded).secrets) == dict(build_spec(candidate).secrets)


def test_tuning_trials_get_the_launcher_and_the_references(project):
    from cloudtrain.backends.sagemaker.tuning import create_tuning_job
    from cloudtrain.backends.vertex.tuning import render_tuning_job
    from cloudtrain.spec import build_spec
    from tests.backends.sagemaker.conftest import fake_package

    sweep = "sweep:\n  metric: acc\n  params: {lr: {min: 0.001, max: 0.1}}\n"
    ref = "gcp:projects/p/secrets/s/versions/latest"
    spec = build_spec(load_config(project(VERTEX_BASE + f"secrets:\n  HF_TOKEN: {ref}\n" + sweep)))
    code = render_tuning_job(spec, fake_package())["trialJobSpec"]["workerPoolSpecs"][0]["pythonPackageSpec"]
    env = {e["name"]: e["value"] for e in code["env"]}
    assert code["pythonModule"] == "cloudtrain_secrets"
    assert (env["CLOUDTRAIN_SECRET_HF_TOKEN"], env["CLOUDTRAIN_RUN_MODULE"]) == (ref, "trainer.task")

    arn = "aws:arn:aws:secretsmanager:us-east-1:123456789012:secret:db-AbCdEf"
    spec = build_spec(load_config(project(SAGEMAKER_BASE + f"secrets:\n  DB: {arn}\n" + sweep)))
    definition = create_tuning_job(spec, fake_package())["TrainingJobDefinition"]
    assert definition["Environment"]["CLOUDTRAIN_SECRET_DB"] == arn
