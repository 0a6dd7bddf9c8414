# The author's line (training-data-analyst building_production_ml_systems/solutions/1_training_at_scale.ipynb),
# with the values the tests give as variables.
gcloud ai-platform jobs submit training "$JOB_NAME" \
  --module-name=trainer.task \
  --package-path=taxifare/trainer \
  --staging-bucket="gs://$BUCKET" \
  --python-version=3.7 \
  --runtime-version=2.1 \
  --region="$REGION" \
  --stream-logs \
  -- \
  --eval_data_path "$DATA/taxi-valid*" \
  --output_dir "$OUTDIR" \
  --train_data_path "$DATA/taxi-train*" \
  --batch_size 5 \
  --num_examples_to_train_on 100 \
  --num_evals 1 \
  --nbuckets 10 \
  --nnsize 32 8
