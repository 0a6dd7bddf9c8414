"""TF_CONFIG / CLUSTER_SPEC / SM_HOSTS -> which worker this process is."""

from __future__ import annotations

import json

import pytest

from trainer.cluster import SAGEMAKER_WORKER_PORT, resolve_cluster
from trainer.errors import TrainerError


def tf_config(cluster, task_type, index):
    return {"TF_CONFIG": json.dumps({"cluster": cluster, "task": {"type": task_type, "index": index}})}


def test_no_cluster_variables_means_one_worker_that_is_chief():
    c = resolve_cluster({})
    assert not c.is_multi_worker and c.is_chief and c.num_workers == 1 and c.source is None


def test_workers_only_worker_zero_is_chief():
    cluster = {"worker": ["h1:1", "h2:1", "h3:1"]}
    first = resolve_cluster(tf_config(cluster, "worker", 0))
    third = resolve_cluster(tf_config(cluster, "worker", 2))
    assert first.is_multi_worker and first.num_workers == 3
    assert first.is_chief and first.rank == 0
    assert not third.is_chief and third.rank == 2


def test_chief_task_counts_as_a_worker_and_shifts_ranks():
    cluster = {"chief": ["c:1"], "worker": ["w0:1", "w1:1"]}
    chief = resolve_cluster(tf_config(cluster, "chief", 0))
    w0 = resolve_cluster(tf_config(cluster, "worker", 0))
    assert chief.num_workers == 3 and chief.is_chief
    assert not w0.is_chief and w0.rank == 1
    assert w0.workers == ("c:1", "w0:1", "w1:1")


def test_single_task_tf_config_is_not_multi_worker():
    c = resolve_cluster(tf_config({"chief": ["localhost:2222"]}, "chief", 0))
    assert not c.is_multi_worker and c.is_chief


def test_tf_config_with_a_null_cluster_is_one_chief():
    """``"cluster": null`` reads as no cluster; asking for the rank used to raise a TypeError."""
    c = resolve_cluster({"TF_CONFIG": json.dumps({"cluster": None, "task": {}})})
    assert (c.num_workers, c.rank, c.is_chief) == (1, 0, True)


def test_vertex_cluster_spec_pools_map_to_chief_and_workers():
    spec = {
        "cluster": {"workerpool0": ["cmle-training-workerpool0-ab-0:2222"], "workerpool1": ["w-0:2222", "w-1:2222"]},
        "environment": "cloud",
        "task": {"type": "workerpool1", "index": 1},
        "job": "{}",
    }
    c = resolve_cluster({"CLUSTER_SPEC": json.dumps(spec)})
    assert c.source == "CLUSTER_SPEC"
    assert c.task == "worker-1" and c.rank == 2 and c.num_workers == 3
    assert c.tf_config == {
        "cluster": {"chief": ["cmle-training-workerpool0-ab-0:2222"], "worker": ["w-0:2222", "w-1:2222"]},
        "task": {"type": "worker", "index": 1},
    }


def test_tf_config_wins_over_cluster_spec():
    spec = {"cluster": {"workerpool0": ["a:1"], "workerpool1": ["b:1"]}, "task": {"type": "workerpool0", "index": 0}}
    env = {"CLUSTER_SPEC": json.dumps(spec)} | tf_config({"worker": ["x:1", "y:1"]}, "worker", 1)
    c = resolve_cluster(env)
    assert c.source == "TF_CONFIG" and c.task == "worker-1"


def test_sagemaker_hosts_without_tf_config_become_workers():
    env = {"SM_HOSTS": json.dumps(["algo-1", "algo-2"]), "SM_CURRENT_HOST": "algo-2"}
    c = resolve_cluster(env)
    assert c.source == "SM_HOSTS" and c.rank == 1 and not c.is_chief
    workers = [f"algo-1:{SAGEMAKER_WORKER_PORT}", f"algo-2:{SAGEMAKER_WORKER_PORT}"]
    assert c.tf_config == {"cluster": {"worker": workers}, "task": {"type": "worker", "index": 1}}


def test_sagemaker_single_host_is_not_a_cluster():
    c = resolve_cluster({"SM_HOSTS": '["algo-1"]', "SM_CURRENT_HOST": "algo-1"})
    assert not c.is_multi_worker


@pytest.mark.parametrize(
    "environ, message",
    [
        (tf_config({"worker": ["a:1"], "ps": ["p:1"]}, "worker", 0), "ps tasks"),
        (
            {
                "CLUSTER_SPEC": json.dumps(
                    {
                        "cluster": {"workerpool0": ["a:1"], "workerpool3": ["e:1"]},
                        "task": {"type": "workerpool0", "index": 0},
                    }
                )
            },
            "evaluator",
        ),
        (tf_config({"worker": ["a:1", "b:1"]}, "worker", 2), "not in the cluster"),
        (tf_config({"worker": ["a:1", "b:1"]}, "evaluator", 0), "expected 'chief' or 'worker'"),
        ({"TF_CONFIG": "{not json"}, "TF_CONFIG is not valid JSON"),
        ({"SM_HOSTS": '["algo-1", "algo-2"]', "SM_CURRENT_HOST": "algo-9"}, "not among SM_HOSTS"),
    ],
)
def test_unsupported_or_broken_clusters_are_errors(environ, message):
    with pytest.raises(TrainerError, match=message):
        resolve_cluster(environ)


def test_task_is_named_as_the_log_prefix_names_the_replica():
    """The plan's task= and cloudtrain's line prefix name the same replica (chief, worker-0, algo-2)."""
    assert resolve_cluster({}).task == "chief"
    cluster = {"chief": ["h0:1"], "worker": ["h1:1"]}
    assert resolve_cluster(tf_config(cluster, "worker", 0)).task == "worker-0"
    assert resolve_cluster(tf_config(cluster, "chief", 0)).task == "chief"
    hosts = {"SM_HOSTS": '["algo-1", "algo-2"]', "SM_CURRENT_HOST": "algo-2"}
    assert resolve_cluster(hosts).task == "algo-2"
    assert resolve_cluster({"SM_HOSTS": '["algo-1"]', "SM_CURRENT_HOST": "algo-1"}).task == "algo-1"
