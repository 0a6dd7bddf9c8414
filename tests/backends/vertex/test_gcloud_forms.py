"""gcloud's command lines with only the program name changed, through `cloudtrain.cli.main`, offline."""

from __future__ import annotations

import json
import shutil
import textwrap

import pytest

from cloudtrain.cli import main
from tests.conftest import REPO

ARTICLE_CONFIG = """\
trainingInput:
  scaleTier: BASIC
  master_type: complex_model_m_gpu
  worker_count: 0
"""
JOB_DIR = "gs://segment-expansion-dev/ml_job_temp/mgpu_5/"
ARTICLE = [
    "ml-engine",
    "jobs",
    "submit",
    "training",
    "mgpu_32",
    "--stream-logs",
    "--job-dir",
    JOB_DIR,
    "--runtime-version",
    "1.10",
    "--module-name",
    "trainer.task",
    "--package-path",
    "./trainer/",
    "--region",
    "asia-east1",
    "--scale-tier",
    "CUSTOM",
    "--config=./config_gpu4.yaml",
]


@pytest.fixture
def article(tmp_path, monkeypatch):
    """The article's folder: trainer/ and config_gpu4.yaml; gcloud configured with a project."""
    shutil.copytree(REPO / "trainer", tmp_path / "trainer", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "config_gpu4.yaml").write_text(ARTICLE_CONFIG)
    gcloud = tmp_path / "gcloud"
    (gcloud / "configurations").mkdir(parents=True)
    (gcloud / "active_config").write_text("segment")  # `gcloud config configurations activate segment`
    (gcloud / "configurations" / "config_segment").write_text(
        "[core]\naccount = someone@example.com\nproject = segment-expansion-dev\n\n[compute]\nregion = asia-east1\n"
    )
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(gcloud))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_article_command_gives_the_expected_vertex_request(article, capsys):
    code, out, err = run(capsys, *ARTICLE, "--dry-run", "-o", "json")
    assert code == 0, err
    result = json.loads(out)
    body = result["request"]
    (pool,) = body["jobSpec"]["workerPoolSpecs"]
    assert pool["machineSpec"] == {
        "machineType": "n1-standard-16",
        "acceleratorType": "NVIDIA_TESLA_T4",
        "acceleratorCount": 4,
    }
    assert result["region"] == "asia-east1" and body["displayName"] == "mgpu_32"
    sha = result["package"]["sha256"]
    staged = pool["pythonPackageSpec"]["packageUris"][0]
    assert staged.startswith(f"{JOB_DIR}packages/{sha}/") and staged.endswith(".tar.gz")
    assert pool["pythonPackageSpec"]["args"] == [f"--job-dir={JOB_DIR.rstrip('/')}"]
    assert pool["pythonPackageSpec"]["pythonModule"] == "trainer.task"
    assert "tf-gpu.2-17" in pool["pythonPackageSpec"]["executorImageUri"]
    assert body["jobSpec"]["baseOutputDirectory"] == {"outputUriPrefix": JOB_DIR.rstrip("/")}
    assert result["project"]["id"] == "segment-expansion-dev"
    assert "gcloud configuration 'segment'" in result["project"]["source"]
    assert any("K80" in n and "T4" in n and n.endswith("/h") for n in result["notes"])
    assert any(n.startswith("mapped: trainingInput.runtimeVersion: 1.10 → 2.17") for n in result["notes"])

    from google.cloud.aiplatform_v1.types import CustomJob
    from google.protobuf import json_format

    json_format.ParseDict(body, CustomJob.pb(CustomJob()), ignore_unknown_fields=False)


def test_ai_platform_is_the_same_command(article, capsys):
    _, ml, _ = run(capsys, *ARTICLE, "--dry-run", "-o", "json")
    _, ai, _ = run(capsys, "ai-platform", *ARTICLE[1:], "--dry-run", "-o", "json")
    strip = lambda text: {k: v for k, v in json.loads(text).items() if k != "request"}  # noqa: E731
    assert strip(ml) == strip(ai)


def test_text_summary_names_project_source_and_each_mapping(article, capsys):
    code, out, err = run(capsys, *ARTICLE, "--dry-run")
    assert code == 0, err
    assert "segment-expansion-dev (from gcloud configuration 'segment'" in out
    assert "cloudtrain · mgpu_32" in out
    assert sum(line.startswith("mapped: ") for line in out.splitlines()) == 2


def test_user_args_after_double_dash_in_order(article, capsys):
    code, out, err = run(capsys, *ARTICLE, "--dry-run", "-o", "json", "--", "--epochs", "2", "--data=digits")
    assert code == 0, err
    (pool,) = json.loads(out)["request"]["jobSpec"]["workerPoolSpecs"]
    assert pool["pythonPackageSpec"]["args"] == ["--epochs", "2", "--data=digits", f"--job-dir={JOB_DIR.rstrip('/')}"]


def test_strict_legacy_refuses_the_k80_in_one_line(article, capsys):
    code, _, err = run(capsys, *ARTICLE, "--dry-run", "--strict-legacy")
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert err.startswith("error: --strict-legacy: mapped: trainingInput.masterType: complex_model_m_gpu")


def test_set_changes_legacy_keys_and_flags(article, capsys):
    code, out, err = run(
        capsys,
        *ARTICLE,
        "--dry-run",
        "-o",
        "json",
        "--set",
        "trainingInput.master_type=standard_v100",
        "--set",
        "labels={team: ml}",
    )
    assert code == 0, err
    body = json.loads(out)["request"]
    assert body["jobSpec"]["workerPoolSpecs"][0]["machineSpec"]["acceleratorType"] == "NVIDIA_TESLA_V100"
    assert body["labels"]["team"] == "ml"


def test_project_flag_wins(article, capsys):
    code, out, _ = run(capsys, *ARTICLE, "--dry-run", "-o", "json", "--project", "other-proj")
    assert code == 0 and json.loads(out)["project"] == {"id": "other-proj", "source": "--project"}


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--packages", "dist/extra.tar.gz"], "error: --packages: cloudtrain builds one package"),
        (["--kms-key", "k"], "error: --kms-key: customer-managed"),
        (["--enable-web-access"], "error: --enable-web-access:"),
        (["--async"], "error: --async and --stream-logs exclude each other"),
        (["--region", "mars-east1"], "error: --region: region: vertex has no region 'mars-east1'"),
        (["--master-accelerator", "count=4"], "error: --master-accelerator needs type="),
        (["--scale-tier", "HUGE"], "error: --scale-tier: trainingInput.scaleTier: unknown scaleTier"),
    ],
)
def test_refusals_are_one_line_exit_2(article, capsys, extra, message):
    code, _, err = run(capsys, *ARTICLE, "--dry-run", *extra)
    assert code == 2 and len(err.strip().splitlines()) == 1 and err.startswith(message), err


def test_on_sagemaker_with_set_backend(article, capsys):
    code, out, err = run(
        capsys,
        *ARTICLE,
        "--dry-run",
        "-o",
        "json",
        "--set",
        "backend=sagemaker",
        "--set",
        "role_arn=arn:aws:iam::123456789012:role/R",
        "--set",
        "job_dir=s3://b/jobs/mgpu_5",
    )
    assert code == 0, err
    result = json.loads(out)
    body = result["request"]
    assert body["ResourceConfig"]["InstanceType"] == "ml.g4dn.12xlarge" and result["region"] == "ap-east-2"
    assert body["TrainingJobName"].startswith("mgpu-32-")  # SageMaker's rule: no "_"
    assert json.loads(body["HyperParameters"]["sagemaker_submit_directory"]).startswith("s3://b/jobs/mgpu_5/packages/")
    assert json.loads(body["HyperParameters"]["cloudtrain_args"]) == ["--job-dir=s3://b/jobs/mgpu_5"]
    code, _, err = run(
        capsys,
        *ARTICLE,
        "--dry-run",
        "--set",
        "backend=sagemaker",
        "--set",
        "role_arn=arn:aws:iam::123456789012:role/R",
    )
    assert code == 2 and "job_dir" in err and "s3://" in err


CUSTOM_JOB_SPEC = """\
workerPoolSpecs:
  - machineSpec: {machineType: n1-standard-16, acceleratorType: NVIDIA_TESLA_T4, acceleratorCount: 4}
    replicaCount: 1
    diskSpec: {bootDiskType: pd-ssd, bootDiskSizeGb: 200}
    pythonPackageSpec: &code
      executorImageUri: us-docker.pkg.dev/vertex-ai/training/tf-gpu.2-16.py310:latest
      packageUris: [gs://my-bucket/dist/trainer-0.1.tar.gz]
      pythonModule: trainer.task
      args: [--data=digits, --epochs=3]
      env: [{name: TF_CPP_MIN_LOG_LEVEL, value: "1"}]
  - machineSpec: {machineType: n1-standard-16, acceleratorType: NVIDIA_TESLA_T4, acceleratorCount: 4}
    replicaCount: 2
    diskSpec: {bootDiskType: pd-ssd, bootDiskSizeGb: 200}
    pythonPackageSpec: *code
scheduling: {timeout: 7200s}
serviceAccount: trainer@my-project.iam.gserviceaccount.com
network: projects/123456789/global/networks/default
baseOutputDirectory: {outputUriPrefix: gs://my-bucket/outputs/mnist}
"""


def custom_job_args(path, *extra):
    return [
        "ai",
        "custom-jobs",
        "create",
        "--region",
        "us-central1",
        "--display-name",
        "mnist_cj",
        "--config",
        str(path),
        "--project",
        "my-project",
        "--set",
        "package.path=./trainer",
        "--set",
        "staging_bucket=gs://my-bucket",
        *extra,
        "--dry-run",
        "-o",
        "json",
    ]


def test_custom_job_spec_round_trips_to_the_request_gcloud_would_send(article, capsys):
    import yaml
    from google.cloud.aiplatform_v1.types import CustomJobSpec
    from google.protobuf import json_format

    path = article / "spec.yaml"
    path.write_text(CUSTOM_JOB_SPEC)
    code, out, err = run(capsys, *custom_job_args(path))
    assert code == 0, err
    result = json.loads(out)
    sent = result["request"]["jobSpec"]
    theirs = yaml.safe_load(CUSTOM_JOB_SPEC)
    ours_uri = sent["workerPoolSpecs"][0]["pythonPackageSpec"]["packageUris"]
    for pool in theirs["workerPoolSpecs"]:
        pool["pythonPackageSpec"] = {**pool["pythonPackageSpec"], "packageUris": ours_uri}
    as_proto = lambda d: json_format.ParseDict(d, CustomJobSpec.pb(CustomJobSpec()))  # noqa: E731
    assert as_proto(sent) == as_proto(theirs)
    assert result["request"]["displayName"] == "mnist_cj"
    assert any("packageUris" in n for n in result["notes"])


def test_custom_job_from_worker_pool_spec_flags(article, capsys):
    code, out, err = run(
        capsys,
        "ai",
        "custom-jobs",
        "create",
        "--region",
        "us-central1",
        "--display-name",
        "wps",
        "--worker-pool-spec",
        "machine-type=n1-standard-8,replica-count=1,accelerator-type="
        "NVIDIA_TESLA_T4,accelerator-count=1,executor-image-uri=us-docker.pkg.dev/vertex-ai/"
        "training/tf-gpu.2-17.py310:latest,python-module=trainer.task,local-package-path=./trainer",
        "--args=--epochs=1,--data=digits",
        "--set",
        "staging_bucket=gs://my-bucket",
        "--dry-run",
        "-o",
        "json",
    )
    assert code == 0, err
    (pool,) = json.loads(out)["request"]["jobSpec"]["workerPoolSpecs"]
    assert pool["machineSpec"]["acceleratorCount"] == 1 and pool["pythonPackageSpec"]["args"] == [
        "--epochs=1",
        "--data=digits",
    ]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            ("pythonPackageSpec: *code", "pythonPackageSpec: *code\n    containerSpec: {imageUri: gcr.io/p/t:1}"),
            "a containerSpec or a pythonPackageSpec, not both",
        ),
        (
            ("scheduling: {timeout: 7200s}", "scheduling: {restartJobOnWorkerRestart: true}"),
            "restartJobOnWorkerRestart",
        ),
        (("network:", "enableWebAccess: true\nnetwork:"), "interactive shell access"),
    ],
)
def test_custom_job_refusals_are_one_line(article, capsys, change, message):
    path = article / "spec.yaml"
    old, new = change
    path.write_text(CUSTOM_JOB_SPEC.replace(old, new, 1))
    code, _, err = run(capsys, *custom_job_args(path))
    assert code == 2 and len(err.strip().splitlines()) == 1 and message in err, err


def test_custom_job_packageuris_without_a_folder_names_the_fix(article, capsys):
    path = article / "spec.yaml"
    path.write_text(CUSTOM_JOB_SPEC)
    args = [a for a in custom_job_args(path) if a != "package.path=./trainer"]
    args.remove("--set")
    code, _, err = run(capsys, *args)
    assert code == 2 and "package.path" in err and "packageUris" in err


def test_the_gcloud_forms_import_no_cloud_sdk(article):
    import subprocess
    import sys

    probe = textwrap.dedent(f"""
        import sys
        from cloudtrain.cli import main
        code = main({ARTICLE + ["--dry-run", "-o", "json"]!r})
        bad = [m for m in sys.modules if m.startswith(("google.cloud.", "boto3", "botocore", "tensorflow"))]
        print(code, bad)
    """)
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=article, check=True).stdout
    assert out.strip().splitlines()[-1] == "0 []"


def test_every_refused_flag_the_cli_takes_has_its_one_line_reason():
    from cloudtrain.backends.vertex import commands as cli_gcloud
    from cloudtrain.backends.vertex.gcloud import REFUSED_FLAGS

    taken = {
        *cli_gcloud._MLENGINE_REFUSED,
        *cli_gcloud._CUSTOM_JOB_REFUSED,
        *cli_gcloud._LOCAL_TRAIN_REFUSED,
        *cli_gcloud._LOCAL_RUN_REFUSED,
        "--packages",
        "--enable-web-access",
        "--enable-dashboard-access",
    }
    assert taken == set(REFUSED_FLAGS)


def test_no_scale_tier_means_basic_as_in_ml_engine(article, capsys):
    code, out, err = run(
        capsys,
        "ml-engine",
        "jobs",
        "submit",
        "training",
        "j_basic",
        "--module-name",
        "trainer.task",
        "--package-path",
        "trainer",
        "--job-dir",
        "gs://b/x",
        "--region",
        "us-central1",
        "--dry-run",
        "-o",
        "json",
    )
    assert code == 0, err
    assert json.loads(out)["request"]["jobSpec"]["workerPoolSpecs"][0]["machineSpec"] == {
        "machineType": "n1-standard-4"
    }


def test_the_article_config_alone_needs_only_a_region_and_a_bucket(article, capsys):
    code, out, err = run(
        capsys,
        "submit",
        "--config",
        "config_gpu4.yaml",
        "--set",
        "region=asia-east1",
        "--set",
        "staging_bucket=gs://segment-expansion-dev",
        "--dry-run",
        "-o",
        "json",
    )
    assert code == 0, err
    result = json.loads(out)
    assert result["job_name"].startswith("config_gpu4-") and result["project"]["id"] == "segment-expansion-dev"
    pool = result["request"]["jobSpec"]["workerPoolSpecs"][0]
    assert pool["machineSpec"]["acceleratorCount"] == 4  # BASIC + master_type: read as CUSTOM, with a line
    assert any(n.startswith("mapped: trainingInput.scaleTier: BASIC → CUSTOM (masterType") for n in result["notes"])


def test_a_whole_custom_job_as_dry_run_prints_it_loads_back_to_the_same_request(article, capsys):
    code, out, err = run(capsys, *ARTICLE, "--dry-run", "-o", "json", "--", "--epochs=2")
    assert code == 0, err
    first = json.loads(out)
    (article / "job.json").write_text(json.dumps(first["request"]))  # JSON is YAML
    code, out, err = run(
        capsys,
        "submit",
        "--config",
        "job.json",
        "--set",
        "region=asia-east1",
        "--set",
        "package.path=trainer",
        "--set",
        f"job_dir={JOB_DIR}",
        "--dry-run",
        "-o",
        "json",
    )
    assert code == 0, err
    again = json.loads(out)["request"]
    assert again["displayName"] == "mgpu_32"
    ours, theirs = again["jobSpec"], first["request"]["jobSpec"]
    assert ours["workerPoolSpecs"][0]["pythonPackageSpec"]["args"] == ["--epochs=2", f"--job-dir={JOB_DIR.rstrip('/')}"]
    assert ours == theirs


def test_a_container_job_spec_runs_unchanged_nothing_built(article, capsys):
    """The CustomJobSpec with containerSpec gives the request gcloud would send; no package, no bucket needed."""
    import yaml
    from google.cloud.aiplatform_v1.types import CustomJobSpec
    from google.protobuf import json_format

    from tests.config.test_gcloud import CONTAINER_JOB_SPEC

    path = article / "spec.yaml"
    path.write_text(CONTAINER_JOB_SPEC)
    args = [
        "ai",
        "custom-jobs",
        "create",
        "--region",
        "us-central1",
        "--display-name",
        "mnist_c",
        "--config",
        str(path),
        "--project",
        "my-project",
        "--dry-run",
    ]
    code, out, err = run(capsys, *args, "-o", "json")
    assert code == 0, err
    result = json.loads(out)
    assert result["package"] is None
    theirs = yaml.safe_load(CONTAINER_JOB_SPEC)
    for pool in theirs["workerPoolSpecs"]:
        pool["diskSpec"] = {"bootDiskType": "pd-ssd", "bootDiskSizeGb": 100}  # what Vertex fills in anyway
    as_proto = lambda d: json_format.ParseDict(d, CustomJobSpec.pb(CustomJobSpec()))  # noqa: E731
    assert as_proto(result["request"]["jobSpec"]) == as_proto(theirs)
    code, out, err = run(capsys, *args)
    assert code == 0, err
    assert "container: us-docker.pkg.dev/my-project/train/mnist:1: python -m trainer.task --epochs=3" in out
    assert "nothing is uploaded" in out
    code, _, err = run(
        capsys,
        *args,
        "--set",
        "backend=sagemaker",
        "--set",
        "role_arn=arn:aws:iam::123456789012:role/R",
        "--set",
        "output_dir=s3://b/out",
    )
    assert code == 2 and len(err.strip().splitlines()) == 1 and "push the image to ECR" in err, err
    code, _, err = run(capsys, *args, "--set", "backend=local")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "does not start containers" in err, err


def test_container_image_uri_in_worker_pool_spec_with_command_and_args(article, capsys):
    code, out, err = run(
        capsys,
        "ai",
        "custom-jobs",
        "create",
        "--region",
        "us-central1",
        "--display-name",
        "wpc",
        "--project",
        "my-project",
        "--worker-pool-spec",
        "machine-type=n1-standard-4,replica-count=1,container-image-uri=gcr.io/p/t:1",
        "--command=python,train.py",
        "--args=--epochs=1",
        "--set",
        "output_dir=gs://b/o",
        "--dry-run",
        "-o",
        "json",
    )
    assert code == 0, err
    (pool,) = json.loads(out)["request"]["jobSpec"]["workerPoolSpecs"]
    assert pool["containerSpec"] == {
        "imageUri": "gcr.io/p/t:1",
        "command": ["python", "train.py"],
        "args": ["--epochs=1"],
    }


def test_configuration_flag_picks_that_gcloud_configuration_as_in_gcloud(article, capsys):
    (article / "gcloud" / "configurations" / "config_other").write_text("[core]\nproject = other-project-7\n")
    code, out, err = run(capsys, *ARTICLE, "--dry-run", "-o", "json", "--configuration", "other")
    assert code == 0, err
    assert json.loads(out)["project"]["id"] == "other-project-7"
    assert json.loads(out)["project"]["source"].startswith("gcloud configuration 'other' (")
    code, out, err = run(capsys, *ARTICLE, "--dry-run", "-o", "json")  # the active one otherwise
    assert json.loads(out)["project"]["id"] == "segment-expansion-dev"


# --- the local forms: `ai-platform local train` and `ai custom-jobs local-run` run --local ---------------


def local_request(capsys, *args):
    at = args.index("--") if "--" in args else len(args)  # what follows `--` is the code's own
    code, out, err = run(capsys, *args[:at], "--dry-run", "-o", "json", *args[at:])
    assert code == 0, err
    plan = json.loads(out)
    assert plan["backend"] == "local" and plan["request"]["contract"] == "vertex"
    return plan["request"]


def test_local_train_runs_the_module_here_with_the_args_after_dashes(article, capsys):
    request = local_request(
        capsys, "ai-platform", "local", "train", "--module-name", "trainer.task", "--package-path", "trainer/",
        "--", "--epochs", "3", "--lr=0.5",
    )  # fmt: skip
    (chief,) = request["replicas"]
    assert chief["argv"][1:] == ["-m", "trainer.task", "--epochs", "3", "--lr=0.5"]
    assert "TF_CONFIG" not in chief["env"] or json.loads(chief["env"]["TF_CONFIG"])["cluster"].keys() == {"chief"}


@pytest.mark.parametrize(
    ("counts", "replicas"),
    [((), 5), (("--worker-count", "1", "--parameter-server-count", "0"), 2), (("--worker-count", "3"), 6)],
)
def test_local_train_distributed_runs_gclouds_default_cluster(article, capsys, counts, replicas):
    """--distributed: 2 workers and 2 parameter servers unless counted (gcloud's defaults); parameter servers
    become workers (the mapped: line), so the chief and 4 workers run here."""
    request = local_request(
        capsys, "ai-platform", "local", "train", "--module-name", "trainer.task", "--package-path", "trainer/",
        "--distributed", *counts,
    )  # fmt: skip
    assert len(request["replicas"]) == replicas
    cluster = json.loads(request["replicas"][0]["env"]["TF_CONFIG"])["cluster"]
    assert len(cluster["chief"]) == 1 and len(cluster["worker"]) == replicas - 1


def test_local_train_without_distributed_ignores_the_counts_as_gcloud_does(article, capsys):
    request = local_request(
        capsys, "ml-engine", "local", "train", "--module-name", "trainer.task", "--package-path", "trainer/",
        "--worker-count", "4",
    )  # fmt: skip
    assert len(request["replicas"]) == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--package-path", "trainer/"), "--module-name is required"),
        (("--module-name", "trainer.task", "--evaluator-count", "1"), "--evaluator-count: cloudtrain runs no"),
    ],
)
def test_local_train_refusals_are_one_line(article, capsys, args, message):
    code, _out, err = run(capsys, "ai-platform", "local", "train", *args)
    assert code == 2 and err.startswith(f"error: {message}") and len(err.strip().splitlines()) == 1


def test_local_run_runs_the_executor_images_module_with_requirements(article, capsys):
    image = "us-docker.pkg.dev/vertex-ai/training/tf-cpu.2-15.py310:latest"
    args = (
        "ai", "custom-jobs", "local-run", "--executor-image-uri", image, "--python-module", "trainer.task",
        "--local-package-path", "trainer", "--requirements", "cloudtrain-fixture-dep,six==1.16.0",
    )  # fmt: skip
    (chief,) = local_request(capsys, *args, "--", "--epochs", "2")["replicas"]
    assert chief["argv"][1:] == ["-m", "trainer.task", "--epochs", "2"]
    code, out, err = run(capsys, *args, "--dry-run")
    assert code == 0, err
    requires = next(line for line in out.splitlines() if line.startswith("requires:"))
    assert requires.startswith("requires: cloudtrain-fixture-dep, six==1.16.0")  # then the package's own


def test_local_run_script_and_refusals(article, capsys):
    (article / "code").mkdir()
    (article / "code" / "train.py").write_text("print('hi')\n")
    image = "us-docker.pkg.dev/vertex-ai/training/tf-cpu.2-15.py310:latest"
    base = ["ai", "custom-jobs", "local-run", "--executor-image-uri", image, "--local-package-path", "code"]
    request = local_request(capsys, *base, "--script", "train.py", "--", "--steps", "9")
    (chief,) = request["replicas"]
    assert chief["argv"][-2:] == ["--steps", "9"] and "--model_dir" not in chief["argv"]  # Vertex passes none
    for extra, message in (
        ((), "give one of --python-module and --script"),
        (("--script", "train.py", "--output-image-uri", "x"), "--output-image-uri: a local run builds no Docker"),
    ):
        code, _out, err = run(capsys, *base, *extra)
        assert code == 2 and err.startswith(f"error: {message}"), err


@pytest.mark.slow
@pytest.mark.tf
def test_local_train_runs_the_package_here_and_exits_with_its_outcome(article, capsys):
    """`gcloud ai-platform local train` as typed, on this machine: the repository's trainer, two epochs."""
    out = article / "run"
    code, _out, err = run(
        capsys, "ai-platform", "local", "train", "--module-name", "trainer.task", "--package-path", "trainer/",
        "--set", f"output_dir={out}", "--", "--data=digits", "--epochs=2",
    )  # fmt: skip
    assert code == 0, err[-3000:]
    metrics = json.loads((out / "model" / "metrics.json").read_text())  # where AIP_MODEL_DIR says
    assert (metrics["epochs"], metrics["epochs_run"]) == (2, 2)  # the args after `--` reached the module
