# Our own reproduction of GoogleCloudPlatform/training-data-analyst courses/machine_learning/deepdive2/
# building_production_ml_systems/solutions/taxifare/trainer/task.py (commit 9cebf08) and the
# 1_training_at_scale notebook's gcloud line (launch.sh); written for cloudtrain's tests, not copied.
# What matters: strict argparse with --job-dir accepted and ignored, --output_dir required (the model
# goes there, not to AIP_MODEL_DIR), CSV globs read with tf.data.experimental.make_csv_dataset,
# TF 2.1-2.3-era Keras: feature columns + DenseFeatures, Lambda layers, a ModelCheckpoint prefix.
import argparse

from trainer import model

if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--eval_data_path", required=True)
    parser.add_argument("--nnsize", nargs="+", type=int, default=[32, 8])
    parser.add_argument("--nbuckets", type=int, default=10)
    parser.add_argument("--num_evals", type=int, default=5)
    parser.add_argument("--num_examples_to_train_on", type=int, default=100)
    parser.add_argument("--output_dir", required=True)
    parser.add_argument("--train_data_path", required=True)
    parser.add_argument("--job-dir", default="junk", help="ignored, but gcloud passes it")
    hparams = parser.parse_args().__dict__
    hparams.pop("job_dir", None)
    model.train_and_evaluate(hparams)
