"""A Keras 2 script failing under Keras 3: the failure line names the version mismatch."""

from __future__ import annotations

import textwrap
import traceback

import pytest

from cloudtrain.backends.base import JobState
from cloudtrain.backends.local.backend import LocalBackend
from cloudtrain.backends.local.keras3 import keras3_hint

from .conftest import make_spec


def _traceback_of(call) -> str:
    try:
        call()
    except Exception:
        return traceback.format_exc()
    raise AssertionError("Keras 3 accepted Keras 2 code")


@pytest.mark.slow
@pytest.mark.tf
def test_real_keras3_errors_for_keras2_code_get_the_hint(tmp_path):
    import keras

    if not keras.__version__.startswith("3."):
        pytest.skip("this environment has Keras 2")
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    saved_model_dir = _traceback_of(lambda: model.save(str(tmp_path / "1")))  # SageMaker's serving layout
    old_optimizer = _traceback_of(lambda: keras.optimizers.SGD(lr=0.1))
    for text in (saved_model_dir, old_optimizer):
        hint = keras3_hint("epoch 1\n" + text, "2.17", "sagemaker")
        assert hint and "Keras 3" in hint and 'image.tensorflow: "2.14"' in hint, text
    assert 'image.tensorflow: "2.15"' in str(keras3_hint(old_optimizer, "2.17", "vertex"))


def test_other_failures_and_keras2_versions_get_no_hint():
    keras_error = (
        'Traceback (most recent call last):\n  File "/x/keras/src/saving/saving_api.py", line 1\n'
        "ValueError: Invalid filepath extension for saving.\n"
    )
    assert keras3_hint(keras_error, "2.17", "vertex")
    assert keras3_hint(keras_error, "2.15", "vertex") is None  # Keras 2 raises no such thing
    assert (
        keras3_hint("Traceback (most recent call last):\nZeroDivisionError: division by zero\n", "2.17", "vertex")
        is None
    )
    assert keras3_hint("Invalid filepath extension for saving (printed, no traceback)", "2.17", "vertex") is None


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
    assert status.message.startswith("replica chief exited with code 1; this is a Keras 3 error: TensorFlow 2.17")
    assert "\n" not in status.message
