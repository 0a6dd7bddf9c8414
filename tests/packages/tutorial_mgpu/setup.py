# The setup.py an ML Engine tutorial puts next to its trainer/ package (gcloud's --package-path
# reads it from here): the name, version and requirements of what the cloud installs.
from setuptools import find_packages, setup

REQUIRED_PACKAGES = ["scikit-learn>=1.3"]

setup(
    name="mgpu",
    version="0.2",
    install_requires=REQUIRED_PACKAGES,
    packages=find_packages(),
    include_package_data=True,
    description="Keras + MirroredStrategy on handwritten digits",
)
