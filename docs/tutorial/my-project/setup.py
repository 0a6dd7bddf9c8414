from setuptools import find_packages, setup

setup(name="my-points", version="0.1", packages=find_packages(), install_requires=[])
