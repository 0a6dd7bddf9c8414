"""One line for a local run that failed with a Keras 3 error in code written for Keras 2.

TensorFlow 2.16 made Keras 3 its ``tf.keras``; scripts written for the TensorFlow ≤ 2.15
images (``model.save(dir)`` for a SavedModel, ``SGD(lr=…)``, ``Model.fit`` under
``MultiWorkerMirroredStrategy``) fail there, in the cloud exactly as here. When the failed
replica's last traceback goes through Keras and ends in one of Keras 3's own messages, the
failure line names the mismatch and the version to pin instead.
"""

from __future__ import annotations

from cloudtrain import catalog
from cloudtrain.catalog.suggest import version_key

TRACEBACK = "Traceback (most recent call last)"
#: Messages that only Keras 3 raises for Keras 2 code (the traceback must go through Keras too).
KERAS3_SIGNS = (
    "Invalid filepath extension for saving",  # model.save("dir"): SavedModel export is model.export now
    "Argument(s) not recognized",  # SGD(lr=…), removed arguments
    "Unrecognized keyword arguments passed to",
    "is not supported in Keras 3",
    "is no longer supported in Keras 3",
    "A KerasTensor cannot be used as input to a TensorFlow function",
    "Attempt to convert a value (PerReplica",  # Model.fit under MultiWorkerMirroredStrategy
    "has no attribute 'legacy'",  # tf.keras.optimizers.legacy
    "No module named 'keras.wrappers'",
)
FIRST_KERAS3 = (2, 16)
TAIL_CHARS = 20_000


def keras3_hint(log_text: str, tensorflow: str | None, cloud: str) -> str | None:
    """The hint for the last traceback in ``log_text``, or None when it is no Keras 3 error.
    ``tensorflow``: the run's TensorFlow (the image's; None when an explicit image was given)."""
    text = log_text[-TAIL_CHARS:]
    if TRACEBACK not in text:
        return None
    last = text[text.rindex(TRACEBACK) :]
    if "keras" not in last.lower() or (tensorflow and version_key(tensorflow) < FIRST_KERAS3):
        return None
    if not any(sign in last for sign in KERAS3_SIGNS):
        return None
    keras2 = [v for v in catalog.tensorflow_versions(cloud) if version_key(v) < FIRST_KERAS3]
    pin = f'set image.tensorflow: "{keras2[-1]}" (Keras 2) or port the code' if keras2 else "port the code"
    return (
        f"this is a Keras 3 error: TensorFlow {tensorflow or '2.16 or later'} comes with Keras 3 and the code "
        f"was written for tf.keras of TensorFlow 2.15 or earlier (Keras 2); the {cloud} image fails the same "
        f"way: {pin} (keras.io/guides/migrating_to_keras_3)"
    )
