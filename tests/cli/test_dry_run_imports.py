"""What a dry run imports (issue 44): only what it uses. Its cost is measured in bench/cli_bench.py (CPU above
the interpreter, and the module count beside it); here the module set is pinned, not timed: none of the
modules a real submit, a sweep, a follower or the secrets launcher needs, and a ceiling on how many it adds
to the interpreter's own start."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from cloudtrain import backend_rules
from tests.conftest import REPO

#: A dry run added 195 modules to the interpreter's start before issue 44 (Vertex; 191 SageMaker), 185 after; a
#: Slurm dry run 264 before its cluster calls moved to .cluster and .ssh, 189 after; Kubernetes' 200 before its
#: client, handle and staging went behind .live, 190 after. Issue 50's bound: 190, every backend's five built in.
#: Counted without the registered backends' own packages and sections, which the schema reads for every config
#: (two modules a backend: one added by docs/how-to/add-a-backend.md is no regression): 190 less the seven of those
#: the five built-in backends give.
MODULES_CEILING = 183
#: A local dry run (``--local``) runs where it is printed: it finds this machine's interpreter for the image and
#: #: its GPUs (``subprocess``), names the environment it would build (``runner.venv``), and its backend module is
#: the run's own supervisor (free ports: ``socket``; the secrets read here). 242 counted when it was first pinned.
LOCAL_USES = (
    "subprocess",
    "socket",
    "cloudtrain.backends.runner.venv",
    "cloudtrain.following.setup_lines",
    "cloudtrain.backends.secrets_here",
    "urllib.request",
    "http.client",
    "email",
    "ssl",
)
LOCAL_CEILING = 242

#: Each with what pulls it in when it is imported where it is not used.
NEVER = (
    "urllib.request",  # the secrets launcher's resolver (cloudtrain.backends.secrets_here), a real submit's
    "http.client",
    "email",  # http.client's headers
    "ssl",
    "socket",
    "subprocess",  # a setup.py run, a local run
    "concurrent.futures",  # uploads
    "pydantic",  # words an invalid config's errors only
    "rich",  # draws on a terminal only
    "cloudtrain.backends.secrets_here",
    "cloudtrain.sweeps",  # a sweep's requests and checks
    "cloudtrain.following.timeline",  # a followed job's phases
    "cloudtrain.following.setup_lines",
    "cloudtrain.backends.vertex.formats",  # ML Engine's and CustomJob's own keys, translated
    "cloudtrain.backends.vertex.mlengine",
    "cloudtrain.backends.vertex.tuning",
    "cloudtrain.backends.vertex.upload",
    "cloudtrain.backends.sagemaker.tuning",
    "cloudtrain.backends.sagemaker.upload",
    "cloudtrain.backends.slurm.cluster",  # sbatch, squeue, the job and sweep handles
    "cloudtrain.backends.slurm.shell",
    "cloudtrain.backends.slurm.job",
    "cloudtrain.backends.slurm.sweep_array",
    "cloudtrain.backends.slurm.sweep_handle",
    "cloudtrain.backends.runner.venv",  # building an environment
)

_PROBE = """
import json, sys
before = set(sys.modules)
from cloudtrain.cli import main
rc = main(sys.argv[1:])
print(json.dumps({"rc": rc, "added": sorted(set(sys.modules) - before)}), file=sys.stderr)
"""


def _dry_run_modules(config: str, tmp_path, *extra: str) -> list[str]:
    args = ["submit", "--config", f"job_configs/{config}", "--dry-run", *extra]
    env = {"CLOUDTRAIN_CACHE_DIR": str(tmp_path), "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, *args], cwd=REPO, capture_output=True, text=True, env=env, check=False
    )
    report = json.loads(done.stderr.strip().splitlines()[-1])
    assert report["rc"] == 0, done.stderr[-2000:]
    assert done.stdout.strip(), "the dry run printed its request"
    return report["added"]


@pytest.mark.parametrize(
    ("config", "extra"),
    [
        ("gpu4.yaml", ()),
        ("sagemaker-gpu4.yaml", ()),
        ("gpu4.yaml", ("-o", "json")),
        ("slurm.yaml", ()),
        ("kubernetes.yaml", ()),
        ("gpu4.yaml", ("--local",)),
    ],
    ids=["vertex", "sagemaker", "vertex-json", "slurm", "kubernetes", "local"],
)
def test_a_dry_run_imports_only_what_it_uses(config, extra, tmp_path):
    added = _dry_run_modules(config, tmp_path, *extra)
    local = "--local" in extra
    uses = LOCAL_USES if local else ()
    assert [m for m in added if _under(m) and not any(m == u or m.startswith(u + ".") for u in uses)] == []
    counted = [m for m in added if m not in _sections()]
    assert len(counted) <= (LOCAL_CEILING if local else MODULES_CEILING), f"{len(counted)} modules: {counted}"
    assert {"yaml", "click", "tarfile", "cloudtrain.spec"} <= set(added)  # the probe sees what the run imports


def _sections() -> set[str]:
    """Each registered backend's package and config section: what the schema imports for any config."""
    names = backend_rules.names()
    return {f"cloudtrain.backends.{n}" for n in names} | {f"cloudtrain.backends.{n}.section" for n in names}


def _under(module: str) -> bool:
    """``module`` is one of :data:`NEVER` or inside one (``email.message``; not ``emailer``)."""
    return any(module == never or module.startswith(never + ".") for never in NEVER)
