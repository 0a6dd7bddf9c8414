"""cloudtrain: one command from a TensorFlow training package to Vertex AI or SageMaker GPUs."""

__version__ = "0.1.0"
