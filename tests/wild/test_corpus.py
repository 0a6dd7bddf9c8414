"""Real-world training code (tests/packages/wild/, see tests/wild/corpus.py) through validate, both clouds' dry
runs and --local, unchanged, as its users launch it: each step must give what the target demands (it runs,
or the one line the cloud itself would give), checked by exit code and words of the last line.

``test_corpus_step`` covers every step cloudtrain already does as demanded; it fails when one regresses.
``test_pending_corpus_step`` holds the steps listed in ``corpus.PENDING`` (waiting on another part):
each asserts the target too, marked xfail(strict) with the part it waits on, and
``test_pending_steps_fail_today_as_recorded`` pins what they do today, so any change is seen. When a
pending step starts passing, strict xfail fails it: move the row out of PENDING."""

from __future__ import annotations

import pytest

from tests.wild import corpus

pytestmark = pytest.mark.slow

STEPS = sorted(corpus.EXPECTED)
DONE = [key for key in STEPS if key not in corpus.PENDING]
PENDING = [key for key in STEPS if key in corpus.PENDING]


def _marks(step: str) -> list[pytest.MarkDecorator]:
    return [pytest.mark.tf, pytest.mark.timeout(1200)] if step == "local" else []


def _run(name: str, step: str, tmp_path, tf_cache):
    cache = tf_cache if step == "local" else tmp_path / "cache"  # local runs share the image layers
    return corpus.run(name, step, tmp_path, corpus.base_env(cache, tmp_path / "home"))


def _explain(result) -> str:
    return f"rc={result.returncode}; last line: {corpus.last_line(result)}\n{(result.stdout + result.stderr)[-3000:]}"


@pytest.mark.parametrize(("name", "step"), [pytest.param(*key, marks=_marks(key[1])) for key in DONE])
def test_corpus_step(name, step, tmp_path, tf_cache):
    result = _run(name, step, tmp_path, tf_cache)
    assert corpus.meets(result, corpus.EXPECTED[(name, step)]), _explain(result)


@pytest.mark.parametrize(
    ("name", "step"),
    [
        pytest.param(*key, marks=[*_marks(key[1]), pytest.mark.xfail(strict=True, reason=corpus.PENDING[key][1])])
        for key in PENDING
    ],
)
def test_pending_corpus_step(name, step, tmp_path, tf_cache):
    result = _run(name, step, tmp_path, tf_cache)
    assert corpus.meets(result, corpus.EXPECTED[(name, step)]), _explain(result)


@pytest.mark.parametrize(("name", "step"), [pytest.param(*key, marks=_marks(key[1])) for key in PENDING])
def test_pending_steps_fail_today_as_recorded(name, step, tmp_path, tf_cache):
    result = _run(name, step, tmp_path, tf_cache)
    assert corpus.meets(result, corpus.PENDING[(name, step)][0]), _explain(result)


def test_every_package_names_its_source_and_has_its_launch_and_data():
    for name, row in corpus.PACKAGES.items():
        folder = corpus.WILD / name
        launch = {"gcloud": "launch.sh", "estimator": "launch.py", "config": "job.yaml"}[row["launch"]]
        assert (folder / launch).is_file() and (folder / "make_data.py").is_file(), name
        heads = ["\n".join(p.read_text().splitlines()[:3]) for p in folder.rglob("*.py") if p.name != "make_data.py"]
        assert any(h.startswith("# Our own reproduction of") and "commit" in h for h in heads), name
    assert len(corpus.PACKAGES) >= 12
