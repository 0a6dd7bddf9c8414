# Our own reproduction of the trainer/task.py that training-data-analyst 2_hyperparameter_tuning_vertex.ipynb
# (commit 88d4b2110247f88f9b5cd31c021a072b33333d17) writes; for cloudtrain's tests, not copied. What matters:
# --output_dir defaulting to AIP_MODEL_DIR, --nnsize as one space-separated string, parse_known_args,
# the undeclared `import hypertune` in model.py (a Keras callback reporting val_rmse each epoch),
# the Vertex prebuilt image tf-cpu.2-3 of its trial spec (launch.sh).
import argparse
import os

from trainer import model

if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--eval_data_path", required=True)
    parser.add_argument("--nnsize", default="32 8")
    parser.add_argument("--nbuckets", type=int, default=10)
    parser.add_argument("--lr", type=float, default=0.001)
    parser.add_argument("--num_evals", type=int, default=5)
    parser.add_argument("--num_examples_to_train_on", type=int, default=100)
    parser.add_argument("--output_dir", default=os.getenv("AIP_MODEL_DIR"))
    parser.add_argument("--train_data_path", required=True)
    args, _ = parser.parse_known_args()
    hparams = args.__dict__
    print("output_dir", hparams["output_dir"])
    model.train_and_evaluate(hparams)
