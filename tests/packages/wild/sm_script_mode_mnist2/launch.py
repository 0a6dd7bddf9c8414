# The author's estimator for the TF 2.1 script (aws/amazon-sagemaker-examples sagemaker-python-sdk/
# tensorflow_script_mode_training_and_serving/tensorflow_script_mode_training_and_serving.ipynb, commit 06880b1);
# read by `cloudtrain init --from-estimator`, never run.
import sagemaker
from sagemaker.tensorflow import TensorFlow

role = sagemaker.get_execution_role()
training_data_uri = "s3://sagemaker-sample-data-us-east-1/tensorflow/mnist"

mnist_estimator2 = TensorFlow(
    entry_point="mnist-2.py",
    role=role,
    instance_count=2,
    instance_type="ml.p3.2xlarge",
    framework_version="2.1.0",
    py_version="py3",
    distribution={"parameter_server": {"enabled": True}},
)

mnist_estimator2.fit(training_data_uri)
