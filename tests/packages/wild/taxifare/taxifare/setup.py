# Our own reproduction of GoogleCloudPlatform/training-data-analyst
# courses/machine_learning/deepdive2/building_production_ml_systems/solutions/taxifare/setup.py (commit 4291e00):
# install_requires read from requirements.txt beside it at build time.
from os import path

from setuptools import find_packages, setup

HERE = path.abspath(path.dirname(__file__))

with open(path.join(HERE, "requirements.txt")) as f:
    requirements = [line.strip() for line in f]

setup(
    name="taxifare",
    version="0.1",
    packages=find_packages(exclude=["tests", "notebooks"]),
    install_requires=requirements,
)
