# Our own reproduction of the setup.py GoogleCloudPlatform/vertex-ai-samples
# notebooks/community/sdk/sdk_custom_image_classification_batch.ipynb (commit 1f949ce) echoes into custom/:
# no name, no version, one install_requires pin of its era. (tensorflow_datasets left out: see trainer/task.py.)
import setuptools

setuptools.setup(install_requires=[], packages=setuptools.find_packages())
