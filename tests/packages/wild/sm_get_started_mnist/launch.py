# The author's estimator (aws/amazon-sagemaker-examples frameworks/tensorflow/get_started_mnist_train.ipynb,
# commit 05b2d09), as a notebook cell would create it; read by `cloudtrain init --from-estimator`, never run.
from sagemaker import get_execution_role
from sagemaker.tensorflow import TensorFlow

role = get_execution_role()
output_path = "s3://my-bucket/mnist"

est = TensorFlow(
    entry_point="train.py",
    source_dir="code",
    role=role,
    framework_version="2.3.1",
    model_dir=False,
    py_version="py37",
    instance_type="ml.c4.xlarge",
    instance_count=1,
    volume_size=250,
    output_path=output_path,
    hyperparameters={"batch-size": 512, "epochs": 1, "learning-rate": 1e-3, "beta_1": 0.9, "beta_2": 0.999},
)

loc = "s3://my-bucket/mnist"
channels = {"training": loc, "testing": loc}
est.fit(inputs=channels)
