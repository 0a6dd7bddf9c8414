"""The training package that runs on the cloud machine: ``python -m trainer.task``.

Why a custom training loop and not ``Model.fit``: Keras 3's ``fit`` fails under
``MultiWorkerMirroredStrategy`` ("Attempt to convert a value (PerReplica...)",
keras-team/keras#20585, tensorflow/tensorflow#72388). The two ways around it are
tf-keras's ``fit`` or a loop of ``strategy.run`` inside ``tf.function``. tf-keras
must be pinned to the exact TensorFlow minor of each cloud image (Vertex ships
TF 2.17, SageMaker TF 2.16-2.21), so one sdist could not serve them all; the
custom loop uses only ``tf.distribute`` and Keras 3 APIs present in every
TF >= 2.16 image, with no extra dependency. The same loop runs on CPU, one GPU,
several GPUs and several machines: only the strategy object changes.

Modules without TensorFlow (importable anywhere, unit-tested without TF):
``env`` (platform contract), ``cluster`` (TF_CONFIG), ``precision`` (policy
choice), ``plan`` (batch/LR math and the plan block), ``schedule`` (LR
schedule), ``data_spec`` (what ``--data`` names), ``events`` (JSON lines),
``errors``, ``preemption`` (the notice; TensorFlow only inside its handler);
``hardware`` and ``strategy`` import TF only inside the functions that touch
devices.
"""
