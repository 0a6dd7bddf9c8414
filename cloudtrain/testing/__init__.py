"""What cloudtrain offers a backend's own test suite: :mod:`cloudtrain.testing.contract`, the contract every
backend passes. Imported only by tests (it needs pytest); nothing in cloudtrain imports it."""
