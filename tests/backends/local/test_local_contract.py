"""The contract as pure data: exact variables and paths for Vertex and SageMaker."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cloudtrain.backends.runner import contract
from cloudtrain.packaging import BuiltPackage

from .conftest import JOB_NAME, make_spec

OUT = "/runs/demo"
SDIST = "/dist/fakepkg-0.1-abc.tar.gz"
PKG = BuiltPackage(
    path=Path(SDIST),
    sha256="ab" * 32,
    size=0,
    name="fakepkg",
    version="0.1",
    filename="fakepkg-0.1-abc.tar.gz",
    files=(),
    warnings=(),
)


def test_vertex_single_replica_gets_the_documented_dirs_and_no_cluster(tmp_path):
    (chief,) = contract.plan(make_spec(tmp_path), output_dir=OUT, ports=[0], package=PKG)
    assert chief.name == "chief"
    assert dict(chief.env) == {
        "AIP_MODEL_DIR": "/runs/demo/model/",
        "AIP_CHECKPOINT_DIR": "/runs/demo/checkpoints/",
        "AIP_TENSORBOARD_LOG_DIR": "/runs/demo/logs/",
        "CLOUD_ML_JOB_ID": JOB_NAME,
    }
    assert (chief.model_dir, chief.checkpoint_dir, chief.tensorboard_dir) == (
        "/runs/demo/model/",
        "/runs/demo/checkpoints/",
        "/runs/demo/logs/",
    )
    assert chief.cwd == "/runs/demo/local-run/chief"


#: Variables of the contracts that name a file or the package, not a folder the code writes into.
NOT_FOLDERS = {"SM_MODULE_DIR"}


@pytest.mark.parametrize("cloud", ["vertex", "sagemaker"])
@pytest.mark.parametrize("replicas", [1, 2])
def test_every_folder_the_contract_names_exists_before_the_code_starts(tmp_path, cloud, replicas):
    """``model.save(os.path.join(os.environ["AIP_MODEL_DIR"], "m.keras"))`` works on Vertex AI (a Cloud
    Storage prefix) and failed locally with FileNotFoundError: the folder was never created."""
    from cloudtrain.backends.local.backend import prepare

    data = tmp_path / "data"
    data.mkdir()
    out = tmp_path / "runs" / "demo-b"
    spec = make_spec(tmp_path, cloud=cloud, replica_count=replicas)
    plans = contract.plan(spec, output_dir=str(out), ports=[0] * replicas, package=PKG, channels={"train": str(data)})
    prepare(plans)
    for plan in plans:
        named = {k: v for k, v in plan.env.items() if k.endswith("_DIR") and k not in NOT_FOLDERS}
        named |= {k: v for k, v in plan.env.items() if k.startswith("SM_CHANNEL_")}
        assert len(named) >= 4 and all(v.startswith(str(out)) for v in named.values())
        assert {k: v for k, v in named.items() if not Path(v).is_dir()} == {}
        assert Path(plan.model_dir).is_dir() and Path(plan.checkpoint_dir).is_dir() and Path(plan.cwd).is_dir()


def test_vertex_cluster_spec_and_tf_config_for_three_replicas(tmp_path):
    spec = make_spec(tmp_path, replica_count=3, args=("--epochs=2",), hyperparameters={"lr": 0.1})
    plans = contract.plan(spec, output_dir=OUT, ports=[1001, 1002, 1003], package=PKG)
    assert [p.name for p in plans] == ["chief", "worker-0", "worker-1"]
    addresses = ["127.0.0.1:1001", "127.0.0.1:1002", "127.0.0.1:1003"]
    tasks = [("workerpool0", "chief", 0), ("workerpool1", "worker", 0), ("workerpool1", "worker", 1)]
    for p, (pool, tf_type, index) in zip(plans, tasks, strict=True):
        cluster_spec = json.loads(p.env["CLUSTER_SPEC"])
        tf_config = json.loads(p.env["TF_CONFIG"])
        assert cluster_spec["cluster"] == {"workerpool0": addresses[:1], "workerpool1": addresses[1:]}
        assert cluster_spec["task"] == {"type": pool, "index": index}
        assert tf_config["cluster"] == {"chief": addresses[:1], "worker": addresses[1:]}
        assert tf_config["task"] == {"type": tf_type, "index": index}
        assert cluster_spec["environment"] == tf_config["environment"] == "cloud"
        job = tf_config["job"]
        # The Vertex backend's own CustomJobSpec (proto3 JSON: int64 as strings), with the local sdist.
        assert [pool["replicaCount"] for pool in job["workerPoolSpecs"]] == ["1", "2"]
        assert job["workerPoolSpecs"][0]["pythonPackageSpec"]["args"] == ["--epochs=2", "--lr=0.1"]
        assert job["workerPoolSpecs"][1]["pythonPackageSpec"]["packageUris"] == [SDIST]
        assert job["baseOutputDirectory"] == {"outputUriPrefix": OUT}
        # Vertex gives every replica the same directories; the trainer keeps non-chief writes apart.
        assert p.env["AIP_MODEL_DIR"] == "/runs/demo/model/"


def test_the_trainer_reads_the_vertex_contract_back(tmp_path):
    from trainer import cluster
    from trainer import env as trainer_env

    plans = contract.plan(make_spec(tmp_path, replica_count=2), output_dir=OUT, ports=[1, 2], package=PKG)
    ranks = []
    for p in plans:
        c = cluster.resolve_cluster(p.env)
        ranks.append((c.rank, c.num_workers, c.is_chief))
        resolved = trainer_env.resolve(p.env)
        assert resolved.platform == "vertex" and resolved.job_id == JOB_NAME
        assert resolved.dirs.model_dir == "/runs/demo/model/"
        assert resolved.dirs.checkpoint_dir == "/runs/demo/checkpoints/"
        assert resolved.dirs.tensorboard_dir == "/runs/demo/logs/"
    assert ranks == [(0, 2, True), (1, 2, False)]


def test_sagemaker_tree_per_host(tmp_path):
    spec = make_spec(
        tmp_path,
        cloud="sagemaker",
        replica_count=2,
        hyperparameters={"epochs": 3, "lr": 0.01, "dataset": "digits", "shuffle": True},
    )
    plans = contract.plan(
        spec,
        output_dir=OUT,
        ports=[2001, 2002],
        package=PKG,
        channels={"training": "/data/train"},
        num_gpus=[2, 2],
        num_cpus=8,
    )
    assert [p.name for p in plans] == ["algo-1", "algo-2"]
    second = plans[1]
    base = "/runs/demo/algo-2"
    assert second.cwd == f"{base}/code"
    assert (second.model_dir, second.checkpoint_dir) == (f"{base}/model", f"{base}/checkpoints")
    assert set(second.dirs) >= {
        f"{base}/input/config",
        f"{base}/input/data",
        f"{base}/model",
        f"{base}/output/data",
        f"{base}/checkpoints",
    }
    hps = json.loads(second.files[f"{base}/input/config/hyperparameters.json"])
    assert all(isinstance(v, str) for v in hps.values())  # SageMaker's wire format
    assert {k: json.loads(hps[k]) for k in ("epochs", "lr", "dataset", "shuffle")} == {
        "epochs": 3,
        "lr": 0.01,
        "dataset": "digits",
        "shuffle": True,
    }
    assert hps["dataset"] == '"digits"' and hps["shuffle"] == "true"
    assert json.loads(hps["sagemaker_multi_worker_mirrored_strategy_enabled"]) is True
    # Exactly what the SageMaker backend sends: its launcher runs the module with these.
    assert json.loads(hps["sagemaker_program"]) == "cloudtrain_launch.py"
    assert json.loads(hps["cloudtrain_module"]) == "fakepkg.task"
    assert json.loads(hps["sagemaker_submit_directory"]) == SDIST
    rc = json.loads(second.files[f"{base}/input/config/resourceconfig.json"])
    assert rc["current_host"] == "algo-2" and rc["hosts"] == ["algo-1", "algo-2"]
    assert rc["current_group_name"] == "homogeneousCluster"
    assert rc["instance_groups"] == [
        {
            "instance_group_name": "homogeneousCluster",
            "instance_type": "ml.g4dn.12xlarge",
            "hosts": ["algo-1", "algo-2"],
        }
    ]
    idc = json.loads(second.files[f"{base}/input/config/inputdataconfig.json"])
    assert idc == {
        "training": {"TrainingInputMode": "File", "S3DistributionType": "FullyReplicated", "RecordWrapperType": "None"}
    }
    env = second.env
    assert env["SM_MODEL_DIR"] == f"{base}/model"
    assert env["SM_OUTPUT_DATA_DIR"] == f"{base}/output/data"
    assert env["SM_CHANNEL_TRAINING"] == f"{base}/input/data/training"
    assert env["SM_CHANNELS"] == '["training"]'
    assert json.loads(env["SM_HPS"]) == {
        "epochs": 3,
        "lr": 0.01,
        "dataset": "digits",
        "shuffle": True,
        "cloudtrain_module": "fakepkg.task",
        "cloudtrain_args": [],
    }
    assert env["SM_HP_EPOCHS"] == "3" and env["SM_HP_DATASET"] == "digits"
    assert env["SM_HOSTS"] == '["algo-1","algo-2"]' and env["SM_CURRENT_HOST"] == "algo-2"
    assert (env["SM_NUM_GPUS"], env["SM_NUM_CPUS"]) == ("2", "8")
    assert json.loads(env["SM_TRAINING_ENV"])["current_host"] == "algo-2"
    assert env["SAGEMAKER_BASE_DIR"] == base and env["TRAINING_JOB_NAME"] == JOB_NAME
    # The SageMaker TF container's TF_CONFIG for multi-worker mirrored: workers only, host order.
    assert json.loads(env["TF_CONFIG"]) == {
        "cluster": {"worker": ["127.0.0.1:2001", "127.0.0.1:2002"]},
        "environment": "cloud",
        "task": {"index": 1, "type": "worker"},
    }


def test_sagemaker_single_host_has_no_tf_config(tmp_path):
    (only,) = contract.plan(make_spec(tmp_path, cloud="sagemaker"), output_dir=OUT, ports=[0], package=PKG)
    assert only.name == "algo-1" and "TF_CONFIG" not in only.env
    assert only.env["PYTHONDONTWRITEBYTECODE"] == "1"  # the TF training image's ENV line
    assert only.env["SM_HOSTS"] == '["algo-1"]' and only.env["SM_CHANNELS"] == "[]"
    hps = json.loads(only.files["/runs/demo/algo-1/input/config/hyperparameters.json"])
    assert "sagemaker_multi_worker_mirrored_strategy_enabled" not in hps


def test_the_trainer_reads_the_sagemaker_contract_back(tmp_path):
    from trainer import cluster
    from trainer import env as trainer_env

    spec = make_spec(tmp_path, cloud="sagemaker", replica_count=2, hyperparameters={"epochs": 3})
    plans = contract.plan(spec, output_dir=OUT, ports=[1, 2], package=PKG)
    for i, p in enumerate(plans):
        c = cluster.resolve_cluster(p.env)
        assert (c.rank, c.num_workers, c.is_chief) == (i, 2, i == 0)
        resolved = trainer_env.resolve(p.env)
        assert resolved.platform == "sagemaker" and resolved.job_id == JOB_NAME
        assert resolved.dirs.model_dir == p.model_dir
        assert resolved.hyperparameters["epochs"] == 3
        assert resolved.current_host == p.name and resolved.hosts == ("algo-1", "algo-2")


@pytest.mark.parametrize(
    ("gpus", "n", "expected"),
    [(0, 2, [None, None]), (4, 1, [None]), (4, 2, ["0,1", "2,3"]), (8, 3, ["0,1", "2,3", "4,5"]), (1, 2, [None, None])],
)
def test_gpu_assignment(gpus, n, expected):
    assert contract.gpu_assignment(gpus, n) == expected


def test_wrong_number_of_ports_is_refused(tmp_path):
    with pytest.raises(ValueError, match="need 2 ports"):
        contract.plan(make_spec(tmp_path, replica_count=2), output_dir=OUT, ports=[1], package=PKG)


def test_the_trainer_keeps_sagemaker_checkpoints_inside_the_local_tree(tmp_path):
    from trainer import env as trainer_env

    (plan,) = contract.plan(make_spec(tmp_path, cloud="sagemaker"), output_dir=OUT, ports=[0], package=PKG)
    dirs = trainer_env.resolve(plan.env).dirs
    assert (dirs.checkpoint_dir, dirs.tensorboard_dir) == (plan.checkpoint_dir, plan.tensorboard_dir)


def test_child_env_layers_shell_config_and_contract(tmp_path):
    from cloudtrain.backends.local.backend import child_env

    spec = make_spec(tmp_path, replica_count=2, env={"FOO": "config", "AIP_MODEL_DIR": "/from/config"})
    plan = contract.plan(spec, output_dir=OUT, ports=[1, 2], package=PKG)[1]
    shell = {
        "PATH": "/usr/bin",
        "HOME": "/root",
        "FOO": "shell",
        "TF_CONFIG": "{}",
        "SM_HOSTS": "[]",
        "PYTHONPATH": "/src",
        "CUDA_VISIBLE_DEVICES": "7",
    }
    env = child_env(shell, spec, plan, Path("/cache/envs/x"), "2,3")
    assert env["HOME"] == "/root" and env["FOO"] == "config"
    assert env["AIP_MODEL_DIR"] == "/runs/demo/model/"  # the contract wins
    assert json.loads(env["TF_CONFIG"])["task"] == {"type": "worker", "index": 0}
    assert "SM_HOSTS" not in env and "PYTHONPATH" not in env
    assert env["PATH"] == "/cache/envs/x/bin:/usr/bin" and env["VIRTUAL_ENV"] == "/cache/envs/x"
    assert env["CUDA_VISIBLE_DEVICES"] == "2,3" and env["PYTHONUNBUFFERED"] == "1"
    assert "TF_FORCE_GPU_ALLOW_GROWTH" not in env
    shared = child_env(shell, spec, plan, Path("/e"), None, shared_gpus=True)
    assert "CUDA_VISIBLE_DEVICES" not in shared and shared["TF_FORCE_GPU_ALLOW_GROWTH"] == "true"


def test_vertex_channels_are_linked_folders_named_by_sm_channel_on_every_replica(tmp_path):
    plans = contract.plan(
        make_spec(tmp_path, replica_count=2),
        output_dir=OUT,
        ports=[1, 2],
        package=PKG,
        channels={"train": "/data/train", "Val": "/cache/data/abc"},
    )
    for p in plans:
        assert p.env["SM_CHANNEL_TRAIN"] == "/runs/demo/local-run/data/train"
        assert p.env["SM_CHANNEL_VAL"] == "/runs/demo/local-run/data/Val"
    assert dict(plans[0].links) == {
        "/runs/demo/local-run/data/Val": "/cache/data/abc",
        "/runs/demo/local-run/data/train": "/data/train",
    }


def test_sagemaker_channel_settings_reach_inputdataconfig(tmp_path):
    import dataclasses
    from types import MappingProxyType

    from cloudtrain.spec import DataChannel

    spec = dataclasses.replace(
        make_spec(tmp_path, cloud="sagemaker"),
        channels=MappingProxyType({"train": DataChannel("train", "s3://b/t", "FastFile", "ShardedByS3Key")}),
    )
    (host,) = contract.plan(spec, output_dir=OUT, ports=[1], package=PKG, channels={"train": "/cache/data/abc"})
    idc = json.loads(host.files["/runs/demo/algo-1/input/config/inputdataconfig.json"])
    assert idc == {
        "train": {"TrainingInputMode": "FastFile", "S3DistributionType": "ShardedByS3Key", "RecordWrapperType": "None"}
    }
    assert host.env["SM_CHANNEL_TRAIN"] == "/runs/demo/algo-1/input/data/train"
    assert dict(host.links) == {"/runs/demo/algo-1/input/data/train": "/cache/data/abc"}
