# The author's line (cloudml-samples census/tf-keras README / AI Platform "Getting started: Keras"),
# with the values the tests give as variables.
gcloud ai-platform jobs submit training "$JOB_NAME" \
  --package-path trainer/ \
  --module-name trainer.task \
  --region "$REGION" \
  --python-version 3.5 \
  --runtime-version 1.13 \
  --job-dir "$JOB_DIR" \
  --stream-logs \
  -- \
  --num-epochs 2 \
  --batch-size 16
