"""A Slurm job by its full name (``<cluster>:<run folder>``, as ``status`` names it), offline: read from
the run folder's ``slurm/id.json``; names of other backends and unknown hosts are never read."""

from __future__ import annotations

import json

from cloudtrain.backends.slurm.job import by_full_name, id_file


def test_a_run_folder_here_names_its_job_and_workdir(tmp_path):
    workdir = tmp_path / "fsx ct"  # a space: the name is split at the first ':/' only
    run = workdir / "runs" / "mnist-20260501-120000-ab12"
    (run / "slurm").mkdir(parents=True)
    (run / "slurm" / "id.json").write_text(json.dumps({"job_id": "4711", "workdir": str(workdir)}))
    assert id_file(str(run)) == f"{run}/slurm/id.json"
    assert by_full_name(f"local:{run}", set) == ("4711", {"region": "local", "project": str(workdir)})
    assert by_full_name(f"local:{run}/", set) == ("4711", {"region": "local", "project": str(workdir)})


def test_what_is_no_slurm_run_is_none_and_asks_no_host(tmp_path):
    asked: list[str] = []

    def clusters() -> set[str]:
        asked.append("history")
        return {"hpc-login"}

    assert by_full_name(f"local:{tmp_path}", clusters) is None  # a folder without id.json
    assert by_full_name("s3://bucket/runs/x", clusters) is None  # a bucket
    assert by_full_name("arn:aws:sagemaker:us-east-1:123456789012:training-job/x", clusters) is None
    assert by_full_name("projects/p/locations/us-central1/customJobs/1", clusters) is None
    assert by_full_name("4711", clusters) is None
    assert asked == [] and by_full_name("C:/fsx/runs/x", clusters) is None  # a host history never saw
    assert asked == ["history"]
