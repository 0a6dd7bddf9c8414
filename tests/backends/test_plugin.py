"""A backend of another distribution: the example backend (tests/backends/example/) installed as
``cloudtrain-example``, a ``.dist-info`` beside its code in a folder of its own on ``PYTHONPATH``, with its
``cloudtrain.backends`` and ``cloudtrain.backend_sections`` entry points. cloudtrain finds it with no
line in this repository: the CLI offers it, a dry run of a ``backend: example`` config renders its
request, and the contract suite (cloudtrain.testing.contract) passes on it, run as the distribution's own
test suite would run it. A plugin that cannot be loaded is one line naming its distribution and entry
point, and the built-in backends still work."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from cloudtrain import backend_rules
from tests.conftest import VERTEX_BASE, run_cli

EXAMPLE = Path(__file__).resolve().parent / "example"

EXAMPLE_CONFIG = """\
name: demo
backend: example
region: ex-1
machine: {type: ex-gpu}
image: {uri: registry.example/train:1}
package: {path: trainer, module: trainer.task}
example:
  queue: fast
output_dir: /example/runs/demo
"""

#: The distribution's own test of its backend: the contract's tests on a leg of its engine.
PLUGIN_TEST = """\
import pytest

from cloudtrain.testing.contract import *  # noqa: F403
from cloudtrain.testing.contract import Leg, sample_package, sample_spec

from cloudtrain_example import backend as cloudtrain_example


@pytest.fixture
def leg(monkeypatch, tmp_path):
    monkeypatch.setattr(cloudtrain_example, "ENGINE", cloudtrain_example.Engine())

    def succeed(lines):
        cloudtrain_example.ENGINE.next_script = (["PENDING", "RUNNING", "RUNNING", "SUCCEEDED"], lines)

    def keep_running():
        cloudtrain_example.ENGINE.next_script = (["PENDING", "RUNNING"], [])

    spec = sample_spec(backend="example", region="ex-1")
    return Leg(cloudtrain_example.BACKEND, spec, sample_package(tmp_path), succeed, keep_running,
               lambda handle: f"example:{handle.job_id}")
"""


def install(site: Path, dist: str, entry_points: str, code: dict[str, Path | str] | None = None) -> None:
    """``dist`` 0.1 installed into ``site``: its modules (``{"package/module.py": source file or text}``)
    and a ``.dist-info`` with these entry points."""
    for name, source in (code or {}).items():
        (site / name).parent.mkdir(parents=True, exist_ok=True)
        (site / name).write_text(source if isinstance(source, str) else source.read_text())
    info = site / f"{dist.replace('-', '_')}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(textwrap.dedent(entry_points))


@pytest.fixture
def site(tmp_path: Path) -> Path:
    """A site folder holding the example backend as the distribution ``cloudtrain-example``."""
    folder = tmp_path / "site"
    install(
        folder,
        "cloudtrain-example",
        """\
        [cloudtrain.backends]
        example = cloudtrain_example.backend

        [cloudtrain.backend_sections]
        example = cloudtrain_example.section:Section
        """,
        {  # the section's package imports no backend: the schema imports the section while it loads
            "cloudtrain_example/__init__.py": '"""The example backend, as a distribution of its own."""\n',
            "cloudtrain_example/section.py": EXAMPLE / "section.py",
            "cloudtrain_example/backend.py": EXAMPLE / "__init__.py",
        },
    )
    return folder


def env_with(site: Path) -> dict[str, str]:
    """This environment with ``site`` on the path, and not the repository: tests/ is not importable."""
    return {**os.environ, "PYTHONPATH": str(site)}


def test_the_cli_offers_the_installed_backend_and_dry_runs_its_config(site: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "trainer").mkdir(parents=True)
    (project / "trainer" / "__init__.py").write_text("")
    (project / "trainer" / "task.py").write_text("print('hi')\n")
    (project / "job.yaml").write_text(EXAMPLE_CONFIG)

    helped = run_cli("list", "--help", cwd=project, env=env_with(site), timeout=120)
    builtin = "|".join(n for n in backend_rules.names() if n != "example")  # cloudtrain's own (conftest adds one)
    assert helped.returncode == 0 and f"[{builtin}|example]" in helped.stdout
    without = run_cli("list", "--help", cwd=project, env={**os.environ, "PYTHONPATH": ""}, timeout=120)
    assert f"[{builtin}]" in without.stdout  # it is the distribution that adds it

    dry = run_cli(
        "submit", "--config", "job.yaml", "--dry-run", "-o", "json", cwd=project, env=env_with(site), timeout=120
    )
    assert dry.returncode == 0, dry.stderr
    request = json.loads(dry.stdout)
    assert json.dumps(request).count('"queue": "fast"') == 1  # its own section reached its own render
    assert "Traceback" not in dry.stderr


@pytest.mark.slow  # a pytest of its own: about 10 s
def test_the_contract_suite_passes_on_the_installed_backend_as_its_own_tests(site: Path, tmp_path: Path) -> None:
    suite = tmp_path / "plugin-tests"
    suite.mkdir()
    (suite / "test_contract.py").write_text(PLUGIN_TEST)
    ran = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", str(suite)],
        cwd=suite,
        env=env_with(site),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-2000:]
    assert "10 passed" in ran.stdout


def test_a_broken_plugin_is_one_line_naming_it_and_the_builtin_backends_still_work(site: Path, tmp_path: Path) -> None:
    install(site, "broken-backend", "[cloudtrain.backends]\nbroken = no_such_module_anywhere\n")
    install(site, "greedy-backend", "[cloudtrain.backends]\nvertex = greedy.vertex\n")
    install(
        site,
        "half-backend",
        "[cloudtrain.backends]\nhalf = half.backend\n\n[cloudtrain.backend_sections]\nhalf = half_gone.section:Half\n",
    )
    project = tmp_path / "project"
    (project / "trainer").mkdir(parents=True)
    (project / "trainer" / "__init__.py").write_text("")
    (project / "trainer" / "task.py").write_text("print('hi')\n")
    (project / "job.yaml").write_text(VERTEX_BASE)

    dry = run_cli("submit", "--config", "job.yaml", "--dry-run", cwd=project, env=env_with(site), timeout=120)
    assert dry.returncode == 0, dry.stderr
    greedy = [line for line in dry.stderr.splitlines() if "greedy-backend" in line]
    assert greedy == [
        "warning: entry point 'vertex = greedy.vertex' (cloudtrain.backends) of distribution 'greedy-backend' "
        "is ignored: backend 'vertex' is registered already"
    ]

    half = [line for line in dry.stderr.splitlines() if "half-backend" in line]
    assert len(half) == 1 and half[0].startswith(
        "warning: the 'half' config section is ignored: entry point 'half = half_gone.section:Half' "
        "(cloudtrain.backend_sections) of distribution 'half-backend' cannot be loaded"
    )
    assert "No module named 'half_gone'" in half[0]

    status = run_cli("status", "no-such-job", cwd=project, env=env_with(site), timeout=120)
    assert status.returncode == 2 and "Traceback" not in status.stderr
    broken = [line for line in status.stderr.splitlines() if "broken-backend" in line]
    assert len(broken) == 1
    assert "entry point 'broken = no_such_module_anywhere' (cloudtrain.backends)" in broken[0]
    assert "No module named 'no_such_module_anywhere'" in broken[0] and "uninstall 'broken-backend'" in broken[0]

    used = run_cli("status", "x", "--backend", "broken", cwd=project, env=env_with(site), timeout=120)
    assert used.returncode == 2 and "Traceback" not in used.stderr
    assert used.stderr.strip().splitlines()[-1].startswith("error: entry point 'broken = no_such_module_anywhere'")
    assert "uninstall 'broken-backend'" in used.stderr.strip().splitlines()[-1]
