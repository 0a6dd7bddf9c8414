"""A minimal training package for cloudtrain's packaging tests (no TensorFlow needed)."""
