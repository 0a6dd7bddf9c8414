# Our own reproduction of tensorflow/docs multi_worker_with_keras.ipynb (commit a68c452): the main.py its
# %%writefile cell writes, with the tutorial's model-saving cells after it. What matters: TF_CONFIG read
# directly (len of cluster['worker'] — Vertex AI names the first replica 'chief'), MultiWorkerMirroredStrategy
# with Model.fit(steps_per_epoch=70), the tutorial's own chief test (worker 0, or no task type) deciding
# who keeps the SavedModel written by model.save(dir) under /tmp/keras-model.
import json
import os

import tensorflow as tf

import mnist_setup

per_worker_batch_size = 64
tf_config = json.loads(os.environ["TF_CONFIG"])
num_workers = len(tf_config["cluster"]["worker"])

strategy = tf.distribute.MultiWorkerMirroredStrategy()

global_batch_size = per_worker_batch_size * num_workers
multi_worker_dataset = mnist_setup.mnist_dataset(global_batch_size)

with strategy.scope():
    multi_worker_model = mnist_setup.build_and_compile_cnn_model()

multi_worker_model.fit(multi_worker_dataset, epochs=3, steps_per_epoch=70)

model_path = "/tmp/keras-model"


def _is_chief(task_type, task_id):
    return (task_type == "worker" and task_id == 0) or task_type is None


def _get_temp_dir(dirpath, task_id):
    temp_dir = os.path.join(dirpath, "workertemp_" + str(task_id))
    tf.io.gfile.makedirs(temp_dir)
    return temp_dir


def write_filepath(filepath, task_type, task_id):
    dirpath, base = os.path.dirname(filepath), os.path.basename(filepath)
    if not _is_chief(task_type, task_id):
        dirpath = _get_temp_dir(dirpath, task_id)
    return os.path.join(dirpath, base)


task_type, task_id = strategy.cluster_resolver.task_type, strategy.cluster_resolver.task_id
write_model_path = write_filepath(model_path, task_type, task_id)
multi_worker_model.save(write_model_path)
if not _is_chief(task_type, task_id):
    tf.io.gfile.rmtree(os.path.dirname(write_model_path))
