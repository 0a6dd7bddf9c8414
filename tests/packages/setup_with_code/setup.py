# Version read from a file and requirements from a function: setuptools has to run this.
import os

from setuptools import find_packages, setup

HERE = os.path.dirname(os.path.abspath(__file__))


def requirements():
    return ["PyYAML>=5.1"] + (["numpy"] if os.name == "posix" else [])


with open(os.path.join(HERE, "VERSION")) as f:
    VERSION = f.read().strip()

setup(name="computed", version=VERSION, install_requires=requirements(), packages=find_packages())
