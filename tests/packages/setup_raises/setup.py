from setuptools import setup

import json

settings = json.loads("{not json")  # a bug the user has not found yet

setup(name="broken", version="0.1")
