"""Two local runs started in the same second get two folders and two history records."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from cloudtrain import history
from cloudtrain.backends.local.backend import LocalBackend
from cloudtrain.cli import main
from cloudtrain.errors import BackendError
from tests.backends.local.conftest import make_spec
from tests.concurrency import at_once

CONFIG = """\
name: same-second
backend: local
region: us-central1
project: my-project
machine: {type: n1-standard-4}
package: {path: trainer, module: trainer.task}
"""
TASK = """\
import os, sys
print("model dir", os.environ["AIP_MODEL_DIR"])
os.makedirs(os.environ["AIP_MODEL_DIR"], exist_ok=True)
with open(os.path.join(os.environ["AIP_MODEL_DIR"], "who"), "w") as f:
    f.write(sys.argv[-1])
"""


@pytest.mark.slow
def test_same_second_local_runs_get_their_own_folders(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    pkg = tmp_path / "trainer"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "task.py").write_text(TASK)
    config = tmp_path / "local.yaml"
    config.write_text(textwrap.dedent(CONFIG))

    def submit(who: str):
        return lambda: main(["submit", "--config", str(config), "--set", f"args=[{who}]"])

    assert submit("warm-up")() == 0  # builds the package's env once; the two below reuse it
    assert at_once(submit("first"), submit("second")) == [0, 0]

    runs = sorted(Path("cloudtrain-runs").iterdir())
    assert len(runs) == 3
    written = {}
    for run in runs:
        status = json.loads((run / "local-run" / "status.json").read_text())
        assert status["job_id"] == run.name and status["state"] == "SUCCEEDED"
        written[run.name] = (Path(status["details"]["model_dir"]) / "who").read_text()
    assert sorted(written.values()) == ["first", "second", "warm-up"]
    assert sorted(r.job_id for r in history.recent(100)) == sorted(written)  # one record per run
    capsys.readouterr()
    for job_id in written:
        assert main(["status", job_id]) == 0
        assert main(["logs", job_id]) == 0
        assert f"/{job_id}/" in capsys.readouterr().out


def test_a_run_folder_cloudtrain_chose_is_never_shared(tmp_path, monkeypatch, fake_package, shared_cache):
    monkeypatch.chdir(tmp_path)
    spec = make_spec(tmp_path, output_dir=f"cloudtrain-runs/{'demo-20250101-000000'}")
    Path(spec.output_dir).mkdir(parents=True)
    with pytest.raises(BackendError, match="already exists: another run has this job name"):
        LocalBackend(cache_root=shared_cache).submit(spec, fake_package)
