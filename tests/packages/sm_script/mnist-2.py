"""A SageMaker TensorFlow script-mode training script, written as the SDK's examples write it.

Hyperparameters arrive as ``--name value``; ``--model_dir`` is whatever the estimator passed;
the data is ``x_train.npy`` / ``y_train.npy`` in ``SM_CHANNEL_TRAINING``; the model goes to
``SM_MODEL_DIR``. Nothing here knows about cloudtrain. (The file name has a hyphen, as in the
SDK's ``mnist-2.py`` example: it cannot be imported, only run.)
"""

import argparse
import json
import os
import sys
import tempfile

import numpy as np
import tensorflow as tf


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--learning_rate", type=float, default=0.01)
    parser.add_argument("--optimizer", type=str, default="sgd")
    # The estimator passes --model_dir (an S3 path on SageMaker) whether the script needs it or not.
    parser.add_argument("--model_dir", type=str)
    parser.add_argument("--sm-model-dir", type=str, default=os.environ.get("SM_MODEL_DIR"))
    parser.add_argument("--train", type=str, default=os.environ.get("SM_CHANNEL_TRAINING"))
    parser.add_argument("--hosts", type=list, default=json.loads(os.environ.get("SM_HOSTS", "[]")))
    parser.add_argument("--current-host", type=str, default=os.environ.get("SM_CURRENT_HOST"))
    return parser.parse_known_args()


def main():
    args, unknown = parse_args()
    if os.environ.get("FIXTURE_NEEDS_DEP"):
        import fixture_dep  # installed from requirements.txt, or this fails

        print(f"fixture_dep {fixture_dep.VERSION}")
    hosts, current = args.hosts, args.current_host
    if len(hosts) > 1:
        strategy = tf.distribute.MultiWorkerMirroredStrategy()
    else:
        strategy = tf.distribute.get_strategy()
    x = np.load(os.path.join(args.train, "x_train.npy"))
    y = np.load(os.path.join(args.train, "y_train.npy"))
    with strategy.scope():
        model = tf.keras.Sequential([tf.keras.Input(shape=(x.shape[1],)), tf.keras.layers.Dense(2, activation="softmax")])
        optimizer = tf.keras.optimizers.SGD(args.learning_rate)
        loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(reduction="none")
    # A custom loop, not model.fit: Keras 3 (TF >= 2.16) cannot fit under MultiWorkerMirroredStrategy.
    global_batch = args.batch_size * strategy.num_replicas_in_sync
    options = tf.data.Options()
    options.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.DATA
    dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(global_batch).with_options(options)
    batches = strategy.experimental_distribute_dataset(dataset)

    @tf.function
    def train_step(features, labels):
        def replica_step(features, labels):
            with tf.GradientTape() as tape:
                loss = tf.nn.compute_average_loss(loss_fn(labels, model(features, training=True)),
                                                  global_batch_size=global_batch)
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            return loss

        return strategy.reduce("SUM", strategy.run(replica_step, args=(features, labels)), axis=None)

    for epoch in range(args.epochs):
        losses = [float(train_step(features, labels)) for features, labels in batches]
        print(f"epoch {epoch + 1}/{args.epochs} loss {sum(losses) / len(losses):.4f}", flush=True)

    master = not hosts or current == hosts[0]
    target = args.sm_model_dir if master else tempfile.mkdtemp()  # workers save too, then throw it away
    os.makedirs(target, exist_ok=True)
    model.save(os.path.join(target, "model.keras"))
    report = {
        "argv": sys.argv[1:],
        "unknown": unknown,
        "model_dir": args.model_dir,
        "hosts": hosts,
        "current_host": current,
        "num_gpus": os.environ.get("SM_NUM_GPUS"),
        "output_data_dir": os.environ.get("SM_OUTPUT_DATA_DIR"),
        "cwd": os.getcwd(),
        "replicas": strategy.num_replicas_in_sync,
        "loss": losses[-1],
    }
    with open(os.path.join(target, f"report-{current}.json"), "w") as f:
        json.dump(report, f)
    print(json.dumps({"event": "done", **{k: report[k] for k in ("hosts", "current_host", "replicas")}}))


if __name__ == "__main__":
    main()
