# A setup.py kept inside the package folder itself.
from setuptools import setup

setup(name="inside-trainer", version="1.4", install_requires=["PyYAML>=5.1"])
