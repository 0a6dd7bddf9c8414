# The author's job (vertex-ai-samples sdk_custom_image_classification_batch.ipynb: aip.CustomTrainingJob with
# container_uri gcr.io/cloud-aiplatform/training/tf-cpu.2-1:latest, args --epochs/--steps/--distribute),
# as the equivalent gcloud line, with the values the tests give as variables.
gcloud ai custom-jobs create \
  --region="$REGION" \
  --display-name=cifar10 \
  --worker-pool-spec=machine-type=n1-standard-4,replica-count=1,executor-image-uri=gcr.io/cloud-aiplatform/training/tf-cpu.2-1:latest,local-package-path=custom,python-module=trainer.task \
  --args=--epochs=2,--steps=4,--distribute=single
