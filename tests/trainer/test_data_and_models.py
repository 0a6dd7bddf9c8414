"""Data sources, input pipelines and models, in this process (TensorFlow imported once)."""

from __future__ import annotations

import numpy as np
import pytest

from trainer.data_spec import DataSpec
from trainer.errors import TrainerError

pytestmark = [pytest.mark.slow, pytest.mark.tf]


@pytest.fixture(scope="module")
def digits_uint8():
    from sklearn.datasets import load_digits

    d = load_digits()
    return np.clip(d.images * 16, 0, 255).astype(np.uint8), d.target


def _load(spec, val=None, **kw):
    from trainer import data

    return data.load(spec, val, val_split=kw.pop("val_split", 0.2), seed=kw.pop("seed", 0), **kw)


def _arrays(ds):
    x, y = next(iter(ds.batch(100_000)))
    return x.numpy(), y.numpy()


def test_tfrecord_directory_splits_train_and_validation_by_file_name(tmp_path, digits_uint8):
    from trainer.data import write_tfrecord

    x, y = digits_uint8
    write_tfrecord(str(tmp_path / "digits-train-00000.tfrecord"), x[:1000], y[:1000])
    write_tfrecord(str(tmp_path / "digits-train-00001.tfrecord"), x[1000:1500], y[1000:1500])
    write_tfrecord(str(tmp_path / "digits-val.tfrecord"), x[1500:], y[1500:])
    data = _load(DataSpec("directory", str(tmp_path)))
    assert (data.train_examples, data.val_examples) == (1500, 297)
    assert data.input_shape == (8, 8, 1) and data.num_classes == 10
    vx, vy = _arrays(data.val)
    np.testing.assert_array_equal(vy, y[1500:])
    np.testing.assert_allclose(vx[..., 0], x[1500:] / 255.0, atol=1e-6)


def test_tfrecord_glob(tmp_path, digits_uint8):
    from trainer.data import write_tfrecord

    x, y = digits_uint8
    for i in range(3):
        write_tfrecord(str(tmp_path / f"part-{i}.tfrecord"), x[i * 100 : (i + 1) * 100], y[i * 100 : (i + 1) * 100])
    data = _load(DataSpec("tfrecord", str(tmp_path / "part-*.tfrecord")))
    assert data.train_examples == 300 and data.val is None


def test_npz_with_test_arrays_and_without(tmp_path, digits_uint8):
    x, y = digits_uint8
    np.savez(tmp_path / "full.npz", x_train=x[:1500], y_train=y[:1500], x_test=x[1500:], y_test=y[1500:])
    np.savez(tmp_path / "plain.npz", x=x, y=y)
    full = _load(DataSpec("npz", str(tmp_path / "full.npz")))
    assert (full.train_examples, full.val_examples, full.input_shape) == (1500, 297, (8, 8, 1))
    plain = _load(DataSpec("npz", str(tmp_path / "plain.npz")), val_split=0.25)
    assert (plain.train_examples, plain.val_examples) == (1348, 449)
    tx, _ = _arrays(plain.train)
    assert tx.dtype == np.float32 and 0.0 <= tx.min() and tx.max() <= 1.0  # uint8 scaled to [0, 1]


def test_directory_errors(tmp_path):
    with pytest.raises(TrainerError, match="holds no .npz or .tfrecord files"):
        _load(DataSpec("directory", str(tmp_path)))
    for name in ("a.npz", "b.npz"):
        np.savez(tmp_path / name, x=np.zeros((2, 4, 4), np.uint8), y=np.zeros(2))
    np.savez(tmp_path / "c.npz", x=np.zeros((2, 5, 5), np.uint8), y=np.zeros(2))
    with pytest.raises(TrainerError, match="images of different shapes"):
        _load(DataSpec("directory", str(tmp_path)))


def test_a_channel_of_several_npz_files_is_concatenated_and_split_by_name(tmp_path, digits_uint8):
    x, y = digits_uint8
    np.savez(tmp_path / "part-0.npz", x=x[:700], y=y[:700])
    np.savez(tmp_path / "part-1.npz", x=x[700:1400], y=y[700:1400])
    np.savez(tmp_path / "validation.npz", x=x[1400:], y=y[1400:])
    data = _load(DataSpec("directory", str(tmp_path)))
    assert (data.train_examples, data.val_examples) == (1400, 397)
    tx, ty = _arrays(data.train)
    np.testing.assert_array_equal(ty, y[:1400])  # in file-name order
    assert data.name == "part-0.npz (+1 files)" and "validation.npz" in data.source


def test_several_tfrecord_files_shard_by_file_across_workers_one_file_by_data(tmp_path, digits_uint8):
    import tensorflow as tf

    from trainer import data as data_lib
    from trainer.data import write_tfrecord

    x, y = digits_uint8
    for i in range(3):
        write_tfrecord(str(tmp_path / f"train-{i}.tfrecord"), x[i * 500 : (i + 1) * 500], y[i * 500 : (i + 1) * 500])
    write_tfrecord(str(tmp_path / "val.tfrecord"), x[1500:], y[1500:])
    three = _load(DataSpec("directory", str(tmp_path)))
    one = _load(DataSpec("tfrecord", str(tmp_path / "train-0.tfrecord")))
    policy = tf.data.experimental.AutoShardPolicy

    def shard(d, workers):
        return (
            data_lib.train_pipeline(d, 32, seed=0, num_workers=workers)
            .options()
            .experimental_distribute.auto_shard_policy
        )

    assert len(three.train_files) == 3 and three.describe()["train_files"] == 3
    assert (shard(three, 2), shard(three, 3), shard(three, 4)) == (policy.FILE, policy.FILE, policy.DATA)
    assert (shard(one, 2), shard(three, 1)) == (policy.DATA, policy.DATA)
    evaluated = data_lib.eval_pipeline(three, 32)
    assert evaluated is not None
    assert evaluated.options().experimental_distribute.auto_shard_policy == policy.DATA


def test_missing_npz_and_mismatched_validation(tmp_path):
    with pytest.raises(TrainerError, match="no such file"):
        _load(DataSpec("npz", str(tmp_path / "nope.npz")))
    np.savez(tmp_path / "t.npz", x=np.zeros((8, 4, 4), np.uint8), y=np.zeros(8))
    np.savez(tmp_path / "v.npz", x=np.zeros((8, 5, 5), np.uint8), y=np.zeros(8))
    with pytest.raises(TrainerError, match="differ from training images"):
        _load(DataSpec("npz", str(tmp_path / "t.npz")), str(tmp_path / "v.npz"))


def test_mnist_without_network_is_an_error_not_a_substitute(monkeypatch):
    import keras

    def offline():
        raise OSError("Temporary failure in name resolution")

    monkeypatch.setattr(keras.datasets.mnist, "load_data", offline)
    with pytest.raises(TrainerError, match="could not download MNIST.*--data digits"):
        _load(DataSpec("mnist"))


def test_s3_without_a_filesystem_plugin_says_what_to_install():
    try:
        import tensorflow_io  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("tensorflow-io provides s3:// here")
    from trainer import storage

    with pytest.raises(TrainerError, match="install tensorflow-io"):
        storage.ensure_filesystem("s3://bucket/data.npz")


def test_train_pipeline_batches_by_global_batch_shards_by_data_and_reshuffles():
    import tensorflow as tf

    from trainer import data

    d = data.load_digits(val_split=0.2, seed=0)
    ds = data.train_pipeline(d, global_batch=64, seed=7)
    assert ds.element_spec[0].shape.as_list() == [64, 8, 8, 1]  # full global batches only
    assert ds.options().experimental_distribute.auto_shard_policy == tf.data.experimental.AutoShardPolicy.DATA
    steps = d.train_examples // 64

    def labels(dataset, n):
        return np.concatenate([y.numpy() for _, y in dataset.take(n)])

    first = labels(ds, 2 * steps)
    again = labels(data.train_pipeline(d, global_batch=64, seed=7), 2 * steps)
    np.testing.assert_array_equal(first, again)  # same seed, same order: workers' DATA shards stay disjoint
    epoch1, epoch2 = first[: steps * 64], first[steps * 64 :]
    assert not np.array_equal(epoch1, epoch2)  # reshuffled each epoch
    ev = data.eval_pipeline(d, global_batch=64)
    assert ev is not None
    assert sum(int(y.shape[0]) for _, y in ev) == d.val_examples  # eval keeps the partial last batch


def test_synthetic_data_is_deterministic_and_named():
    from trainer import data

    a = data.synthetic((28, 28, 1), 10, 64, seed=3)
    b = data.synthetic((28, 28, 1), 10, 64, seed=3)
    assert a.name == "synthetic" and "chance" in a.source
    np.testing.assert_array_equal(_arrays(a.train)[0], _arrays(b.train)[0])


@pytest.mark.parametrize("shape", [(8, 8, 1), (28, 28, 1), (32, 32, 3)])
def test_cnn_adapts_to_the_input_shape_and_outputs_float32_under_mixed_precision(shape):
    import keras

    from trainer.models import build_cnn

    keras.mixed_precision.set_global_policy("mixed_bfloat16")
    try:
        model = build_cnn(shape, 10)
        out = model(np.zeros((2, *shape), np.float32))
        assert model.layers[1].compute_dtype == "bfloat16"
    finally:
        keras.mixed_precision.set_global_policy("float32")
    assert tuple(out.shape) == (2, 10) and str(out.dtype) in ("float32", "<dtype: 'float32'>")
    np.testing.assert_allclose(np.asarray(out).sum(axis=1), 1.0, rtol=1e-3)


def test_resnet50_is_random_init_with_a_float32_head():
    from trainer.models import build_model

    model = build_model("resnet50", (64, 64, 3), 1000)
    assert model.output.dtype == "float32"
    assert 25_000_000 < model.count_params() < 26_000_000  # ResNet-50's 25.6 M
    with pytest.raises(TrainerError, match="at least 32x32"):
        build_model("resnet50", (8, 8, 1), 10)


def test_float16_loss_scaling_in_the_custom_loop_matches_unscaled_steps():
    """The trainer never picks float16 on a CPU, so check the GPU path's arithmetic here:
    with the LossScaleOptimizer the loss is scaled before the gradient and the gradients
    unscaled after, so a few SGD steps move the weights as the same float16 steps without
    loss scaling do (this small model has no underflow to rescue)."""
    import keras
    import tensorflow as tf

    from trainer import data
    from trainer.loop import TrainLoop
    from trainer.models import build_cnn, build_optimizer

    strategy = tf.distribute.get_strategy()
    digits = data.load_digits(val_split=0.2, seed=0)
    results = {}
    keras.mixed_precision.set_global_policy("mixed_float16")
    try:
        for loss_scaling in (False, True):
            keras.utils.set_random_seed(0)
            model = build_cnn((8, 8, 1), 10, width=8)
            # In build order, layer by layer: the two models pair up whatever names Keras generated for them
            # (after other models in this process, `model.trainable_weights` need not list them alike).
            weights = [w for layer in model.layers for w in layer.trainable_weights]
            assert len(weights) == len(model.trainable_weights)
            initial = [w.numpy() for w in weights]
            optimizer = build_optimizer("sgd", 0.05, False)
            if loss_scaling:  # a scale small enough that no step overflows and gets skipped
                optimizer = keras.optimizers.LossScaleOptimizer(optimizer, initial_scale=64.0)
            optimizer.build(model.trainable_variables)
            loop = TrainLoop(strategy, model, optimizer, global_batch=32)
            ds = strategy.experimental_distribute_dataset(data.train_pipeline(digits, 32, seed=0))
            loss, _, _ = loop.train(iter(ds), 5)
            moved = [w.numpy() - w0 for w, w0 in zip(weights, initial, strict=True)]
            results[loss_scaling] = (loss, moved)
    finally:
        keras.mixed_precision.set_global_policy("float32")
    assert float(optimizer.dynamic_scale.numpy()) == 64.0  # no step was skipped
    (loss_plain, moved_plain), (loss_scaled, moved_scaled) = results[False], results[True]
    assert np.isfinite(loss_scaled) and loss_scaled == pytest.approx(loss_plain, rel=1e-3)

    # Gradients left scaled, or never scaled, would move the weights 64x as far (or 1/64) here. All weights
    # together move alike to 5 %; each tensor within 2x, a margin that float16 rounding in a full suite's
    # busy process cannot cross and a 64x error cannot miss (one tensor once moved 1.7x apart, at 5 %).
    def norm(tensors: list) -> float:
        return float(np.sqrt(sum(float(np.sum(np.square(t))) for t in tensors)))

    assert norm(moved_scaled) == pytest.approx(norm(moved_plain), rel=0.05)
    for a, b in zip(moved_plain, moved_scaled, strict=True):
        assert 0.5 < np.linalg.norm(b) / np.linalg.norm(a) < 2.0
