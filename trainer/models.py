"""The models: the source articles' CNN, and ResNet-50 for benchmarks.

Both end in a float32 softmax, so under a mixed policy the outputs (and the
loss computed from them) stay float32, as the Keras mixed-precision guide asks.
Build them inside ``strategy.scope()`` after the precision policy is set.
"""

from __future__ import annotations

import keras

from trainer.errors import TrainerError

MODELS = ("cnn", "resnet50")
# What --data synthetic generates for each model when no shape is given.
SYNTHETIC_SHAPES = {"cnn": ((28, 28, 1), 10), "resnet50": ((224, 224, 3), 1000)}


def build_cnn(input_shape, num_classes: int, width: int = 32) -> keras.Model:
    """The source article's conv stack (conv-conv-pool, conv-conv, dense 128), adapted
    to any input: ``same`` padding and pooling only while the image is at least 4
    pixels wide, so 8x8 digits and 28x28 MNIST both fit. Width 32/64 instead of the
    article's 128 throughout: trains in seconds on a CPU and reaches the same accuracy
    on these datasets."""
    inputs = keras.Input(shape=tuple(input_shape), name="image")
    x = inputs
    size = min(input_shape[0], input_shape[1])
    for filters in (width, width * 2):
        x = keras.layers.Conv2D(filters, 3, padding="same", activation="relu")(x)
        x = keras.layers.Conv2D(filters, 3, padding="same", activation="relu")(x)
        if size >= 4:
            x = keras.layers.MaxPooling2D(2)(x)
            size //= 2
    x = keras.layers.Flatten()(x)
    x = keras.layers.Dense(128, activation="relu")(x)
    x = keras.layers.Dropout(0.25)(x)
    x = keras.layers.Dense(num_classes, name="logits")(x)
    outputs = keras.layers.Activation("softmax", dtype="float32", name="probabilities")(x)
    return keras.Model(inputs, outputs, name="cnn")


def build_resnet50(input_shape, num_classes: int) -> keras.Model:
    """``keras.applications.ResNet50`` with random weights: compute-bound, for benchmarks."""
    if min(input_shape[0], input_shape[1]) < 32:
        raise TrainerError(f"resnet50 needs images of at least 32x32, got {tuple(input_shape)}")
    inputs = keras.Input(shape=tuple(input_shape), name="image")
    backbone = keras.applications.ResNet50(weights=None, include_top=False, input_tensor=inputs, pooling="avg")
    x = keras.layers.Dense(num_classes, name="logits")(backbone.output)
    outputs = keras.layers.Activation("softmax", dtype="float32", name="probabilities")(x)
    return keras.Model(inputs, outputs, name="resnet50")


def build_model(name: str, input_shape, num_classes: int, cnn_width: int = 32) -> keras.Model:
    if name == "cnn":
        return build_cnn(input_shape, num_classes, cnn_width)
    if name == "resnet50":
        return build_resnet50(input_shape, num_classes)
    raise TrainerError(f"--model {name!r} is not one of {', '.join(MODELS)}")


def build_optimizer(name: str, lr: float, loss_scaling: bool):
    if name == "adam":
        opt = keras.optimizers.Adam(learning_rate=lr)
    elif name == "sgd":
        opt = keras.optimizers.SGD(learning_rate=lr, momentum=0.9)
    elif name == "rmsprop":
        opt = keras.optimizers.RMSprop(learning_rate=lr)
    else:
        raise TrainerError(f"--optimizer {name!r} is not one of adam, sgd, rmsprop")
    return keras.optimizers.LossScaleOptimizer(opt) if loss_scaling else opt
