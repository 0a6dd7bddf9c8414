"""Vertex AI's environment contract for replica *i* of *n*, for ``--local`` (and the Slurm nodes).

As Vertex documents it (``baseOutputDirectory``): ``AIP_MODEL_DIR``, ``AIP_CHECKPOINT_DIR`` and
``AIP_TENSORBOARD_LOG_DIR`` under the base, the same on every replica; ``CLOUD_ML_JOB_ID``; with several replicas
``CLUSTER_SPEC`` and ``TF_CONFIG`` (chief and workers, ``"environment": "cloud"``). Data channels are linked under
the run and passed as ``SM_CHANNEL_<NAME>``, as the Vertex backend passes them."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from cloudtrain.backends.environment import MachineRoot, ReplicaLayout, ReplicaPlan, join
from cloudtrain.backends.vertex.request import render_custom_job
from cloudtrain.data import schemes
from cloudtrain.packaging import BuiltPackage, script
from cloudtrain.spec import JobSpec


def vertex_job_spec(
    spec: JobSpec, *, output_dir: str, package: BuiltPackage, channel_env: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """The ``CustomJobSpec`` that CLUSTER_SPEC and TF_CONFIG carry as ``job``: the Vertex backend's
    own request (REST JSON), with the local output dir, the local sdist and the local channel
    folders in place of Cloud Storage."""
    bucket = spec.staging_bucket if (spec.staging_bucket or "").startswith("gs://") else "gs://local"
    local = replace(
        spec,
        output_dir=output_dir,
        staging_bucket=bucket,
        env={**spec.env, **(channel_env or {})},
        channels={},
        resume=None,
    )  # a local resume copies the checkpoints instead
    job: dict[str, Any] = render_custom_job(local, package)["jobSpec"]
    for pool in job["workerPoolSpecs"]:
        pool["pythonPackageSpec"]["packageUris"] = [str(package.path)]
    return job


class VertexContract:
    shards_channels = False
    machine_root: MachineRoot | None = None

    def replica_names(self, n: int) -> list[str]:
        return ["chief", *(f"worker-{i}" for i in range(n - 1))]

    def plan(self, spec: JobSpec, layout: ReplicaLayout) -> list[ReplicaPlan]:
        """``channels``: name → local folder, linked at ``<output_dir>/local-run/data/<name>`` (where the
        cloud has ``/gcs/bucket/path``) and passed as ``SM_CHANNEL_<NAME>``, as the Vertex backend does."""
        n, output_dir, package, channels = spec.replica_count, layout.output_dir, layout.package, layout.channels
        addresses = [f"127.0.0.1:{p}" for p in layout.ports]
        gpus = layout.gpus(n)
        model, checkpoints, logs = (join(output_dir, d) + "/" for d in ("model", "checkpoints", "logs"))
        links = {join(output_dir, "local-run", "data", ch): str(src) for ch, src in sorted(channels.items())}
        channel_env = {schemes.channel_env(ch): join(output_dir, "local-run", "data", ch) for ch in sorted(channels)}
        job = vertex_job_spec(spec, output_dir=output_dir, package=package, channel_env=channel_env)
        plans = []
        for i, name in enumerate(self.replica_names(n)):
            env = {
                "AIP_MODEL_DIR": model,
                "AIP_CHECKPOINT_DIR": checkpoints,
                "AIP_TENSORBOARD_LOG_DIR": logs,
                "CLOUD_ML_JOB_ID": spec.job_name,
                **channel_env,
            }
            if spec.package.script:  # as the request's script_env; the launcher derives the other SM_* variables
                env["SM_NUM_GPUS"] = str(gpus[i])
            if n > 1:
                pool, tf_type, index = ("workerpool0", "chief", 0) if i == 0 else ("workerpool1", "worker", i - 1)
                env["CLUSTER_SPEC"] = json.dumps(
                    {
                        "cluster": {"workerpool0": addresses[:1], "workerpool1": addresses[1:]},
                        "environment": "cloud",
                        "task": {"type": pool, "index": index},
                        "job": job,
                    }
                )
                env["TF_CONFIG"] = json.dumps(
                    {
                        "cluster": {"chief": addresses[:1], "worker": addresses[1:]},
                        "environment": "cloud",
                        "task": {"type": tf_type, "index": index},
                        "job": job,
                    }
                )
            plans.append(
                ReplicaPlan(
                    name=name,
                    index=i,
                    env=env,
                    cwd=join(output_dir, "local-run", name),
                    model_dir=model,
                    checkpoint_dir=checkpoints,
                    tensorboard_dir=logs,
                    # the folders AIP_* name exist before the code starts: on Vertex AI they are Cloud Storage
                    # prefixes, where writing a file needs no folder, so code there never creates them
                    dirs=(join(output_dir, "local-run", name), model, checkpoints, logs),
                    links=links if i == 0 else {},
                )
            )
        return plans

    def script_argv(self, spec: JobSpec, plan: ReplicaPlan, python: str, package: BuiltPackage) -> list[str]:
        """The launcher Vertex runs (``python -m cloudtrain_script``) copies the script's folder and runs it."""
        return [python, "-m", script.PACKAGE, *spec.script_args(plan.model_dir)]


CONTRACT = VertexContract()
