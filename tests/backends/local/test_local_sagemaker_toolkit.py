"""sagemaker-training's own reader, pointed at the local /opt/ml tree, reads back the same job."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cloudtrain.backends.local.backend import prepare
from cloudtrain.backends.runner import contract

from .conftest import JOB_NAME, make_spec
from .test_local_contract import PKG

READ_BACK = """
import json
from sagemaker_training import environment
env = environment.Environment()
print(json.dumps({
    "hyperparameters": env.hyperparameters,
    "channels": env.channel_input_dirs,
    "hosts": env.hosts,
    "current_host": env.current_host,
    "model_dir": env.model_dir,
    "module_name": env.module_name,
    "job_name": env.job_name,
    "is_master": env.is_master,
    "framework_params": env.additional_framework_parameters,
    "env_vars": env.to_env_vars(),
}))
"""


@pytest.mark.parametrize(
    ("parameter_server", "framework"),
    [
        (False, "sagemaker_multi_worker_mirrored_strategy_enabled"),
        (True, "sagemaker_parameter_server_enabled"),  # distribution={"parameter_server": {"enabled": True}}
    ],
)
def test_environment_reads_back_hyperparameters_channels_hosts_and_current_host(tmp_path, parameter_server, framework):
    data = tmp_path / "data"
    (data / "train").mkdir(parents=True)
    (data / "val").mkdir()
    out = tmp_path / "out"
    hps = {"epochs": 3, "lr": 0.01, "dataset": "digits", "shuffle": True}
    spec = make_spec(tmp_path, cloud="sagemaker", replica_count=2, hyperparameters=hps)
    spec = dataclasses.replace(spec, parameter_server=parameter_server)
    channels = {"training": str(data / "train"), "validation": str(data / "val")}
    plans = contract.plan(
        spec,
        output_dir=str(out),
        ports=[3001, 3002],
        package=PKG,
        channels=channels,
        num_gpus=0,
        num_cpus=os.cpu_count() or 1,
    )
    prepare(plans)

    for plan in plans:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SM_", "SAGEMAKER_"))}
        env.update(plan.env)
        result = subprocess.run(
            [sys.executable, "-c", READ_BACK], env=env, capture_output=True, text=True, timeout=120, cwd=tmp_path
        )
        assert result.returncode == 0, result.stderr
        got = json.loads(result.stdout.strip().splitlines()[-1])
        base = out / plan.name
        assert got["hyperparameters"] == {**hps, "cloudtrain_module": "fakepkg.task", "cloudtrain_args": []}
        assert got["channels"] == {
            "training": f"{base}/input/data/training",
            "validation": f"{base}/input/data/validation",
        }
        assert Path(got["channels"]["training"]).resolve() == (data / "train").resolve()
        assert got["hosts"] == ["algo-1", "algo-2"]
        assert got["current_host"] == plan.name
        assert got["model_dir"] == plan.model_dir
        assert got["module_name"] == "cloudtrain_launch"  # the SageMaker backend's launcher
        assert got["job_name"] == JOB_NAME
        assert got["is_master"] == (plan.name == "algo-1")
        assert got["framework_params"] == {framework: True}
        tf_config = json.loads(plan.env["TF_CONFIG"])
        roles = {"master": ["127.0.0.1:3001"], "ps": ["127.0.0.1:3002", "127.0.0.1:3003"], "worker": ["127.0.0.1:3002"]}
        assert tf_config["cluster"] == (roles if parameter_server else {"worker": ["127.0.0.1:3001", "127.0.0.1:3002"]})

        # Every SM_* variable the toolkit would export is the one the local run sets.
        theirs = got["env_vars"]
        ours = {k: v for k, v in plan.env.items() if k.startswith("SM_")}
        assert set(ours) == set(theirs)
        for key in sorted(set(theirs) - {"SM_TRAINING_ENV", "SM_NUM_GPUS"}):
            assert ours[key] == theirs[key], key
        their_training_env = json.loads(theirs["SM_TRAINING_ENV"])
        our_training_env = json.loads(ours["SM_TRAINING_ENV"])
        # sagemaker-training 5.x (this environment's) adds "topology"; the TF training images run 4.8.3,
        # which has none (test_local_sagemaker_container_entry.py compares against that one)
        assert set(our_training_env) == set(their_training_env) - {"topology"}
        for key in sorted(set(their_training_env) - {"num_gpus", "topology"}):
            assert our_training_env[key] == their_training_env[key], key


def test_the_cloud_launcher_would_run_the_same_command(tmp_path, fake_package, no_tf):
    """On SageMaker, cloudtrain_launch.py reads hyperparameters.json and execs the module: same argv."""
    from cloudtrain.backends.sagemaker import cloudtrain_launch

    spec = make_spec(
        tmp_path,
        cloud="sagemaker",
        args=("--data=digits", "--no-resume"),
        hyperparameters={"epochs": 2, "lr": 0.5, "shuffle": False},
    )
    out = tmp_path / "out"
    plans = contract.plan(spec, output_dir=str(out), ports=[0], package=fake_package)
    prepare(plans)
    launched = cloudtrain_launch.module_command(
        cloudtrain_launch.read_hyperparameters(plans[0].env["SM_INPUT_CONFIG_DIR"]), python="python"
    )
    rendered = no_tf(cache_root=tmp_path / "cache").render(spec, fake_package)
    assert rendered["replicas"][0]["argv"][1:] == launched[1:]
    assert launched[1:] == [
        "-m",
        "fakepkg.task",
        "--data=digits",
        "--no-resume",
        "--epochs=2",
        "--lr=0.5",
        "--shuffle=false",
    ]


def test_a_script_gets_the_argv_the_toolkit_would_build_from_its_hyperparameters(tmp_path):
    """The toolkit reads hyperparameters.json and passes SM_USER_ARGS to the entry point: our argv, exactly."""
    import dataclasses

    from cloudtrain.packaging import build_script_sdist

    source = tmp_path / "source"
    source.mkdir()
    (source / "mnist-2.py").write_text("")
    package = build_script_sdist(source, tmp_path / "dist", "mnist-2.py")
    spec = make_spec(tmp_path, cloud="sagemaker", hyperparameters={"epochs": 2, "lr": 1e-3, "shuffle": True, "b": 4})
    spec = dataclasses.replace(spec, package=dataclasses.replace(spec.package, path=source, script="mnist-2.py"))
    out = tmp_path / "out"
    plans = contract.plan(spec, output_dir=str(out), ports=[0], package=package, num_gpus=0, num_cpus=1)
    prepare(plans)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SM_", "SAGEMAKER_"))}
    env.update(plans[0].env)
    result = subprocess.run(
        [sys.executable, "-c", READ_BACK], env=env, capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    got = json.loads(result.stdout.strip().splitlines()[-1])
    argv = contract.argv(spec, plans[0], "python", package)
    assert argv[:2] == ["python", "mnist-2.py"]
    assert argv[2:] == json.loads(got["env_vars"]["SM_USER_ARGS"])
    assert argv[2:] == [
        "-b",
        "4",
        "--epochs",
        "2",
        "--lr",
        "0.001",
        "--model_dir",
        plans[0].model_dir,
        "--shuffle",
        "True",
    ]
    assert got["module_name"] == "mnist-2" and got["env_vars"]["SM_USER_ENTRY_POINT"] == "mnist-2.py"
    assert (Path(plans[0].cwd) / "mnist-2.py").is_file()  # unpacked into <host>/code, as /opt/ml/code
