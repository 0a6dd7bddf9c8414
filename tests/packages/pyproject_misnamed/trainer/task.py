import sklearn  # declared in ../pyproject.toml, which does not declare trainer/
print("training")
