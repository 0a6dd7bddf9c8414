"""Secrets by reference: the ``secrets:`` key, the launcher that reads them on the training
machine, and the masking of secret-looking values wherever cloudtrain shows a job's environment.

See docs/how-to/secrets.md."""
