"""The one error type the trainer raises for things the user can fix."""


class TrainerError(Exception):
    """A bad flag, environment or input; ``task.main`` prints it as one ERROR line."""
