"""A stand-in for a model: one learning rate, one step."""


def step(weight: float, lr: float) -> float:
    return weight - lr * 2 * weight
