# The trial of the author's hyperparameter tuning job (training-data-analyst 2_hyperparameter_tuning_vertex.ipynb:
# workerPoolSpecs with executorImageUri tf-cpu.2-3, pythonModule trainer.task, its args), as one custom job
# (cloudtrain has no hp-tuning-jobs command), with the values the tests give as variables.
gcloud ai custom-jobs create \
  --region="$REGION" \
  --display-name=taxifare_trial \
  --worker-pool-spec=machine-type=n1-standard-4,replica-count=1,executor-image-uri=us-docker.pkg.dev/vertex-ai/training/tf-cpu.2-3:latest,local-package-path=taxifare,python-module=trainer.task \
  --args="--train_data_path=$DATA/taxi-train*,--eval_data_path=$DATA/taxi-valid*,--batch_size=15,--num_examples_to_train_on=100,--num_evals=2,--nbuckets=10,--lr=0.001,--nnsize=32 8"
