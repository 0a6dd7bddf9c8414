# Our own reproduction of the setup.py that GoogleCloudPlatform/training-data-analyst
# courses/machine_learning/deepdive2/building_production_ml_systems/solutions/2_hyperparameter_tuning_vertex.ipynb
# (commit 88d4b21) writes: no install_requires, although the trainer imports hypertune.
from setuptools import find_packages, setup

setup(
    name="taxifare_trainer",
    version="0.1",
    packages=find_packages(),
    include_package_data=True,
    description="Taxifare model training application.",
)
