"""gcloud's command lines → config documents: every flag mapped or refused, flags over the file."""

from __future__ import annotations

import pytest

from cloudtrain.backends.vertex import gcloud
from cloudtrain.backends.vertex import mlengine as legacy
from cloudtrain.config.yaml12 import load_yaml
from cloudtrain.errors import UsageError
from tests.config.golden_files import assert_golden

ARTICLE_CONFIG = "trainingInput:\n  scaleTier: BASIC\n  master_type: complex_model_m_gpu\n  worker_count: 0\n"
ARTICLE_FLAGS = {
    "--stream-logs": True,
    "--job-dir": "gs://segment-expansion-dev/ml_job_temp/mgpu_5/",
    "--runtime-version": "1.10",
    "--module-name": "trainer.task",
    "--package-path": "./trainer/",
    "--region": "asia-east1",
    "--scale-tier": "CUSTOM",
}


def article_document():
    return gcloud.mlengine_document("mgpu_32", ARTICLE_FLAGS, (), load_yaml(ARTICLE_CONFIG, "config_gpu4.yaml"))


def test_article_command_document_and_translation_match_golden():
    doc = article_document()
    config, notes = legacy.convert(doc)
    assert_golden(
        "gcloud_article",
        {
            "document": doc.data,
            "config": config,
            "notes": notes,
            "flags": {".".join(k): v for k, v in sorted(doc.flags.items())},
        },
    )


def test_flags_win_over_the_file_in_any_spelling():
    doc = article_document()
    ti = doc.data["trainingInput"]
    assert ti["scaleTier"] == "CUSTOM" and "scale_tier" not in ti  # --scale-tier CUSTOM over the file's BASIC
    assert ti["master_type"] == "complex_model_m_gpu"  # the file's key, in its own spelling, stays


# Every mapped flag: (flag, value) → (path in the translated config, expected value).
MAPPED = [
    ("--job-dir", "gs://b/run", ("job_dir",), "gs://b/run"),
    ("--module-name", "pkg.main", ("package", "module"), "pkg.main"),
    ("--region", "europe-west4", ("region",), "europe-west4"),
    ("--scale-tier", "basic-gpu", ("machine", "accelerator"), "NVIDIA_TESLA_T4"),
    ("--master-machine-type", "n1-highmem-16", ("machine", "type"), "n1-highmem-16"),
    ("--master-image-uri", "gcr.io/p/img:1", ("image", "uri"), "gcr.io/p/img:1"),
    ("--worker-count", "3", ("replica_count",), 4),
    ("--parameter-server-count", "2", ("replica_count",), 3),
    ("--runtime-version", "2.16", ("image", "tensorflow"), "2.16"),
    ("--service-account", "sa@p.iam.gserviceaccount.com", ("service_account",), "sa@p.iam.gserviceaccount.com"),
    ("--staging-bucket", "gs://stage", ("staging_bucket",), "gs://stage"),
    ("--package-path", "src/trainer", ("package", "path"), "src/trainer"),
    ("--project", "my-proj", ("project",), "my-proj"),
    ("--labels", "team=ml,env=dev", ("labels",), {"team": "ml", "env": "dev"}),
]


@pytest.mark.parametrize(("flag", "value", "path", "expected"), MAPPED, ids=[m[0] for m in MAPPED])
def test_each_mapped_flag(flag, value, path, expected):
    flags = {"--scale-tier": "CUSTOM", "--master-machine-type": "n1-standard-8", flag: value}
    if flag == "--master-image-uri":
        flags["--runtime-version"] = None
    if flag == "--scale-tier":
        flags.pop("--master-machine-type")
    doc = gcloud.mlengine_document("job_1", flags, (), None)
    config, _ = legacy.convert(doc)
    node = config
    for part in path:
        node = node[part]
    assert node == expected
    assert doc.error(_doc_path(flag), "x").file == (flag if flag != "--scale-tier" else "--scale-tier")


def _doc_path(flag: str):
    return gcloud.MLENGINE_FLAGS[flag]


def test_accelerator_flags_map_like_accelerator_config():
    flags = {
        "--scale-tier": "CUSTOM",
        "--master-machine-type": "n1-standard-16",
        "--master-accelerator": "type=nvidia-tesla-k80,count=4",
        "--worker-count": "1",
        "--worker-machine-type": "n1-standard-16",
        "--worker-accelerator": "type=nvidia-tesla-k80,count=4",
    }
    config, notes = legacy.convert(gcloud.mlengine_document("j", flags, (), None))
    assert config["machine"] == {"type": "n1-standard-16", "accelerator": "NVIDIA_TESLA_T4", "accelerator_count": 4}
    assert config["replica_count"] == 2 and "K80" in notes[0]


def test_user_args_after_double_dash_keep_their_order_and_replace_the_files():
    text = "trainingInput: {scaleTier: BASIC, args: [--from-file]}\n"
    args = ("--data", "gs://b/x", "--epochs=3", "--", "-v")
    config, _ = legacy.convert(gcloud.mlengine_document("j", {}, args, load_yaml(text, "c.yaml")))
    assert config["args"] == list(args)


def test_job_becomes_the_name_used_as_given():
    config, _ = legacy.convert(gcloud.mlengine_document("mgpu_32", {"--scale-tier": "BASIC"}, (), None))
    assert (config["name"], config["name_suffix"]) == ("mgpu_32", False)


@pytest.mark.parametrize("flag", sorted(gcloud.REFUSED_FLAGS))
def test_each_refused_flag_is_one_line(flag):
    value = ("dist/p.tar.gz",) if flag == "--packages" else True if flag.startswith("--enable") else "x"
    with pytest.raises(UsageError) as info:
        gcloud.mlengine_document("j", {flag: value}, (), None)
    assert str(info.value).startswith(f"{flag}: ") and "\n" not in str(info.value)


@pytest.mark.parametrize("text", ["type", "count=4", "type=t4,count=four"])
def test_bad_accelerator_values_are_one_line(text):
    with pytest.raises(UsageError, match="--master-accelerator"):
        gcloud.mlengine_document("j", {"--master-accelerator": text}, (), None)


def test_worker_pool_spec_parses_into_a_pool_and_package_keys():
    pool, package = gcloud.worker_pool_spec(
        "machine-type=n1-standard-16,replica-count=1,accelerator-type=NVIDIA_TESLA_T4,accelerator-count=4,"
        "executor-image-uri=us-docker.pkg.dev/vertex-ai/training/tf-gpu.2-17.py310:latest,"
        "python-module=trainer.task,local-package-path=./trainer,requirements=pandas;numpy<2"
    )
    assert pool == {
        "machineSpec": {"machineType": "n1-standard-16", "acceleratorType": "NVIDIA_TESLA_T4", "acceleratorCount": 4},
        "replicaCount": 1,
        "pythonPackageSpec": {
            "executorImageUri": "us-docker.pkg.dev/vertex-ai/training/tf-gpu.2-17.py310:latest",
            "pythonModule": "trainer.task",
        },
    }
    assert package == {"path": "./trainer", "requirements": ["pandas", "numpy<2"]}
    with pytest.raises(UsageError, match="unknown key 'gpu'"):
        gcloud.worker_pool_spec("machine-type=n1-standard-4,gpu=1")


def test_custom_job_document_from_flags_matches_golden():
    flags = {
        "--region": "us-central1",
        "--labels": "team=ml",
        "--args": "--epochs=3,--data=digits",
        "--worker-pool-spec": (
            "machine-type=n1-standard-16,replica-count=1,accelerator-type=NVIDIA_TESLA_T4,"
            "accelerator-count=4,executor-image-uri=us-docker.pkg.dev/vertex-ai/training/"
            "tf-gpu.2-17.py310:latest,python-module=trainer.task,local-package-path=./trainer",
            "machine-type=n1-standard-16,replica-count=2,accelerator-type=NVIDIA_TESLA_T4,accelerator-count=4",
        ),
    }
    with pytest.raises(UsageError, match="give --config FILE .* or --worker-pool-spec"):
        gcloud.custom_job_document("mnist", {"--region": "us-central1"}, None)  # neither --config nor a pool
    doc = gcloud.custom_job_document("mnist_run", flags, None)
    assert_golden("gcloud_custom_job_flags", {"document": doc.data})


def test_python_version_flag_is_kept_or_named():
    base = {"--scale-tier": "BASIC", "--runtime-version": "2.17"}
    _, notes = legacy.convert(gcloud.mlengine_document("j", {**base, "--python-version": "3.10"}, (), None))
    assert not [n for n in notes if "pythonVersion" in n]  # the 2.17 image has Python 3.10
    _, notes = legacy.convert(gcloud.mlengine_document("j", {**base, "--python-version": "3.7"}, (), None))
    assert [n for n in notes if "pythonVersion" in n] == [
        "mapped: trainingInput.pythonVersion: 3.7 → 3.10 "
        "(the TensorFlow 2.17 image has Python 3.10; your code runs on that)"
    ]


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        ({"--worker-count": "1", "--worker-machine-type": "n1-highmem-8"}, "same machine as the master"),
        ({"--worker-count": "1", "--worker-accelerator": "type=nvidia-tesla-v100,count=1"}, "same machine"),
        ({"--master-image-uri": "gcr.io/p/a:1", "--worker-image-uri": "gcr.io/p/b:1"}, "master's image"),
    ],
)
def test_worker_flags_that_differ_from_the_master_are_one_line(flags, message):
    from cloudtrain.errors import ConfigError

    base = {"--scale-tier": "CUSTOM", "--master-machine-type": "n1-standard-8"}
    with pytest.raises(ConfigError, match=message) as info:
        legacy.convert(gcloud.mlengine_document("j", {**base, **flags}, (), None))
    assert info.value.file is not None and info.value.file.startswith("--")  # names the flag, not a file line


def test_parameter_server_machine_type_is_taken_and_servers_become_workers():
    flags = {
        "--scale-tier": "CUSTOM",
        "--master-machine-type": "n1-standard-8",
        "--worker-count": "2",
        "--parameter-server-count": "1",
        "--parameter-server-machine-type": "n1-standard-4",
    }
    config, notes = legacy.convert(gcloud.mlengine_document("j", flags, (), None))
    assert config["replica_count"] == 4 and "parameterServerCount: 1 parameter server → 4 replicas" in notes[0]


CONTAINER_JOB_SPEC = """\
workerPoolSpecs:
  - machineSpec: {machineType: n1-standard-8, acceleratorType: NVIDIA_TESLA_T4, acceleratorCount: 1}
    replicaCount: 1
    containerSpec: &code
      imageUri: us-docker.pkg.dev/my-project/train/mnist:1
      command: [python, -m, trainer.task]
      args: [--epochs=3]
      env: [{name: TF_CPP_MIN_LOG_LEVEL, value: "1"}]
  - machineSpec: {machineType: n1-standard-8, acceleratorType: NVIDIA_TESLA_T4, acceleratorCount: 1}
    replicaCount: 2
    containerSpec: *code
scheduling: {timeout: 7200s}
baseOutputDirectory: {outputUriPrefix: gs://my-bucket/outputs/mnist}
"""


def test_container_job_spec_and_container_image_uri_flags_match_golden():
    from cloudtrain.backends.vertex import customjob

    config, notes = customjob.convert(load_yaml(CONTAINER_JOB_SPEC, "container.yaml"))
    flags = {
        "--region": "us-central1",
        "--command": "python,train.py",
        "--args": "--epochs=1",
        "--worker-pool-spec": ("machine-type=n1-standard-4,replica-count=1,container-image-uri=gcr.io/p/t:1",),
    }
    doc = gcloud.custom_job_document("wps", flags, None)
    from_flags, _ = customjob.convert(doc)
    assert config["container"] == {
        "image_uri": "us-docker.pkg.dev/my-project/train/mnist:1",
        "command": ["python", "-m", "trainer.task"],
    }
    assert from_flags["container"] == {"image_uri": "gcr.io/p/t:1", "command": ["python", "train.py"]}
    assert "package" not in config and "image" not in config
    assert_golden(
        "gcloud_container_job",
        {"file": {"config": config, "notes": notes}, "flags": {"document": doc.data, "config": from_flags}},
    )


PARAMETER_SERVER_POOLS = """\
workerPoolSpecs:
  - machineSpec: {{machineType: n1-standard-8}}
    replicaCount: 1
    containerSpec: &code {{imageUri: us-docker.pkg.dev/my-project/train/mnist:1, command: [python, -m, trainer.task]}}
  - machineSpec: {{machineType: n1-standard-8}}
    replicaCount: 2
    containerSpec: *code
  - machineSpec: {{machineType: n1-standard-4}}
    replicaCount: {servers}
    containerSpec: *code
"""


@pytest.mark.parametrize(
    ("servers", "note"),
    [
        (1, "mapped: workerPoolSpecs[2]: 1 parameter server → 4 replicas of the chief's machine"),
        (2, "mapped: workerPoolSpecs[2]: 2 parameter servers → 5 replicas of the chief's machine"),
    ],
)
def test_a_custom_jobs_parameter_servers_become_workers_counted_in_words(servers, note):
    from cloudtrain.backends.vertex import customjob

    config, notes = customjob.convert(load_yaml(PARAMETER_SERVER_POOLS.format(servers=servers), "ps.yaml"))
    assert config["replica_count"] == 3 + servers
    assert [n for n in notes if n.startswith("mapped: workerPoolSpecs[2]")][0].startswith(note)


@pytest.mark.parametrize("module", ["trainer.task", "trainer"])
def test_local_package_path_may_be_the_folder_holding_setup_py_as_gcloud_packages_it(tmp_path, monkeypatch, module):
    """vertex-ai-samples' `custom/` (setup.py, setup.cfg, trainer/): gcloud packages the folder, the module
    runs from the package inside it, and setup.py beside that package is what cloudtrain reads."""
    (tmp_path / "custom" / "trainer").mkdir(parents=True)
    (tmp_path / "custom" / "setup.py").write_text("import setuptools\nsetuptools.setup()\n")
    (tmp_path / "custom" / "trainer" / "__init__.py").write_text("")
    monkeypatch.chdir(tmp_path)
    spec = f"machine-type=n1-standard-4,replica-count=1,python-module={module},local-package-path="
    assert gcloud.worker_pool_spec(spec + "custom")[1]["path"] == "custom/trainer"
    assert gcloud.worker_pool_spec(spec + "custom/trainer")[1]["path"] == "custom/trainer"  # the package itself
    assert gcloud.worker_pool_spec(spec.replace("trainer", "other") + "custom")[1]["path"] == "custom"  # as given
