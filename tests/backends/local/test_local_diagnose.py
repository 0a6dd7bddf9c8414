"""A failed replica's last lines name the cause and the fix: Keras 3 under Keras 2 code, NumPy 2 under an
old TensorFlow, a pin that replaced the image's TensorFlow, an import the package never declared.

The logs under failures/ are real: recorded from failures/snippets.py and a --local run (see its
docstring). The tf-marked test runs the same snippets again under this environment's own TensorFlow, so
a Keras release that rewords an error fails here."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from cloudtrain.backends.base import JobState
from cloudtrain.backends.local.backend import LocalBackend
from cloudtrain.backends.local.diagnose import failure_hint, installed

from .conftest import make_spec

FAILURES = Path(__file__).with_name("failures")

#: snippet → what its hint names (beside "this is a Keras 3 error")
KERAS3_CASES = {
    "reset_states": "metrics' reset_states() is reset_state() in Keras 3",
    "lambda_shape": "a Lambda layer needs output_shape= in Keras 3",
    "layers_experimental": "Keras 3 has no 'experimental' there",
    "optimizers_legacy": "tf.keras.optimizers.legacy is gone",
    "save_folder": "model.save(folder) no longer writes a SavedModel",
    "checkpoint_prefix": "ModelCheckpoint and save_weights take a .keras or .weights.h5 file",
    "sgd_lr": "an argument Keras 2 took (lr=, decay=, …) is gone",
}


def _log(name: str) -> str:
    return (FAILURES / name).read_text(encoding="utf-8")


@pytest.mark.parametrize("case", sorted(KERAS3_CASES))
@pytest.mark.parametrize(("cloud", "keras2"), [("vertex", "2.15"), ("sagemaker", "2.14")])
def test_each_recorded_keras3_error_names_its_api_and_the_newest_keras2_image(case, cloud, keras2):
    hint = failure_hint(_log(f"tf2.17_{case}.log"), "2.17", cloud)
    assert hint is not None, case
    assert hint.startswith(f"this is a Keras 3 error: {KERAS3_CASES[case]}"), hint
    assert f'set image.tensorflow: "{keras2}" (Keras 2)' in hint
    assert f"the {cloud} image fails the same way" in hint and "TensorFlow 2.17 comes with Keras 3" in hint
    assert "\n" not in hint


def test_a_pin_that_replaced_the_images_tensorflow_is_named_instead_of_an_older_image():
    """The 2.11 image (Keras 2) cannot raise a Keras 3 error: what ran is the package's pinned 2.17."""
    log = _log("tf2.17_reset_states.log")
    assert failure_hint(log, "2.11", "vertex") is None  # without knowing what ran: Keras 2 raises no such thing
    hint = failure_hint(log, "2.11", "vertex", {"tensorflow": "2.17.1", "numpy": "1.26.4"})
    assert hint is not None
    assert "replaced the image's TensorFlow 2.11 (Keras 2) with 2.17.1; drop that tensorflow pin" in hint
    assert "image.tensorflow" not in hint


def test_an_image_named_by_uri_is_not_said_to_fail_the_same_way():
    """gcloud's executor-image-uri=…/tf-cpu.2-1: --local ran another TensorFlow; the cloud's 2.1 has Keras 2."""
    hint = failure_hint(_log("tf2.17_save_folder.log"), None, "vertex", {"tensorflow": "2.17.1"})
    assert hint is not None and "the vertex image fails the same way" not in hint
    assert "--local ran TensorFlow 2.17.1 in place of the image named" in hint
    assert 'set image.tensorflow to that image\'s version ("2.15" or older has Keras 2)' in hint


@pytest.mark.parametrize(("tensorflow", "numpy"), [("2.11", "2.2.6"), ("2.9", "2.1.3")])
def test_numpy2_under_an_old_tensorflow_names_numpy1_and_the_first_tensorflow_for_numpy2(tensorflow, numpy):
    log = _log("tf2.11_numpy2_import.log")  # its last traceback is a TypeError; NumPy's words come before it
    hint = failure_hint(log, tensorflow, "vertex", {"numpy": numpy})
    assert hint == (
        f"NumPy {numpy} is installed but TensorFlow {tensorflow} was built against NumPy 1, as the vertex image "
        f"for TensorFlow {tensorflow} ships it (NumPy 2 needs TensorFlow 2.18 or later): add 'numpy<2' to the "
        'package\'s requirements, or set image.tensorflow: "2.18" or later'
    )
    assert "NumPy 2.2.6 is installed" in str(failure_hint(log, tensorflow, "sagemaker"))  # read from the log
    assert failure_hint(log, "2.18", "vertex") is None  # built for NumPy 2: another cause


def test_an_undeclared_import_says_where_to_declare_it_and_whether_the_image_ships_it():
    log = _log("tf2.17_missing_module.log")
    vertex = failure_hint(log, "2.17", "vertex")
    assert vertex is not None and vertex.startswith("the code imports hypertune, which the vertex image ships")
    assert "declare 'cloudml-hypertune'" in vertex
    sagemaker = failure_hint(log, "2.17", "sagemaker")  # not in SageMaker's image
    assert sagemaker == (
        "the code imports hypertune and the package does not declare it: add 'cloudml-hypertune' to "
        "install_requires in its setup.py (gcloud and Vertex AI install those) or to requirements.txt beside "
        "a script (SageMaker installs that)"
    )
    pandas = log.replace("import hypertune", "import pandas").replace("'hypertune'", "'pandas'")
    assert "which the sagemaker image ships (pandas, aws/deep-learning-containers" in str(
        failure_hint(pandas, "2.11", "sagemaker")
    )
    unknown = log.replace("'hypertune'", "'my_helpers'")
    assert "add 'my_helpers' to install_requires" in str(failure_hint(unknown, "2.17", "vertex"))


def test_other_failures_and_keras2_versions_get_no_hint():
    keras_error = (
        'Traceback (most recent call last):\n  File "/x/keras/src/saving/saving_api.py", line 1\n'
        "ValueError: Invalid filepath extension for saving.\n"
    )
    assert failure_hint(keras_error, "2.17", "vertex")
    assert failure_hint(keras_error, None, "vertex")  # an explicit image: the Keras 3 words still tell
    assert failure_hint(keras_error, "2.15", "vertex") is None  # Keras 2 raises no such thing
    division = "Traceback (most recent call last):\nZeroDivisionError: division by zero\n"
    assert failure_hint(division, "2.17", "vertex") is None
    assert failure_hint("Invalid filepath extension for saving (printed, no traceback)", "2.17", "vertex") is None
    # an earlier traceback the run recovered from does not name the last one
    recovered = _log("tf2.17_reset_states.log") + "retrying\n" + division
    assert failure_hint(recovered, "2.17", "vertex") is None


@pytest.mark.slow
@pytest.mark.tf
def test_the_snippets_fail_the_same_way_under_this_environments_keras(tmp_path):
    """Today's Keras words its errors as the recorded logs do (a rewording fails this test)."""
    import keras

    if not keras.__version__.startswith("3."):
        pytest.skip("this environment has Keras 2")
    subprocess.run(
        [sys.executable, str(FAILURES / "snippets.py"), str(tmp_path), *KERAS3_CASES], check=True, timeout=600
    )
    for case, what in KERAS3_CASES.items():
        hint = failure_hint((tmp_path / f"{case}.log").read_text(), "2.21", "vertex")
        assert hint and hint.startswith(f"this is a Keras 3 error: {what}"), (case, hint)


def test_installed_reads_what_the_environment_really_has(tmp_path):
    import numpy

    found = installed(Path(sys.executable))
    assert found["numpy"] == numpy.__version__
    assert found.get("tensorflow") == _version_of("tensorflow")
    assert installed(tmp_path / "no-python") == {}


def _version_of(name: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return None


CRASH = """
import sys
print("Traceback (most recent call last):", file=sys.stderr)
print('  File "/env/lib/python3.10/site-packages/keras/src/optimizers/base_optimizer.py", line 88', file=sys.stderr)
print("ValueError: Argument(s) not recognized: {'lr': 0.1}", file=sys.stderr)
sys.exit(1)
"""


def test_the_failed_replicas_traceback_is_read_into_the_one_failure_line(tmp_path, shared_cache):
    from cloudtrain.packaging import build_sdist

    pkg = tmp_path / "k2pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "task.py").write_text(textwrap.dedent(CRASH))
    package = build_sdist(pkg, tmp_path / "dist")
    spec = make_spec(tmp_path, module="k2pkg.task")
    status = LocalBackend(cache_root=shared_cache, gpu_count=lambda: 0).submit(spec, package).wait()
    assert status.state is JobState.FAILED
    assert status.message is not None
    assert status.message.startswith(
        "replica chief exited with code 1; this is a Keras 3 error: an argument Keras 2 took (lr=, decay=, …) "
        "is gone. TensorFlow 2.17.1 comes with Keras 3"  # what ran, read from the environment
    )
    assert "\n" not in status.message
