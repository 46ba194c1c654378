"""Hand-written numpy twins of the torch workloads: the same math, float32 throughout.

The numpy lane asks what the same pipeline costs in plain numpy (one BLAS call per matrix
product, one ufunc pass per elementwise op). Every twin takes numpy arrays (views of the cell's
torch inputs, so the parity gate sees any write) and the cell's int arguments, and returns a
numpy array of the reference's dtype: float32 activations, int64 labels. Nothing here is
timed by itself; `bench/run.py` parity-gates the twin against eager PyTorch first.
"""

from __future__ import annotations

import numpy as np


def phase_a(x: np.ndarray, weight: np.ndarray, bias: np.ndarray) -> np.ndarray:
    """`F.linear(x, weight, bias).relu().mean(dim=1)`."""
    hidden = x @ weight.T
    hidden += bias
    np.maximum(hidden, 0.0, out=hidden)
    return hidden.mean(axis=1)


def _sigmoid(z: np.ndarray) -> np.ndarray:
    """`torch.sigmoid` in float32 (in place on the owned temporary `z`)."""
    np.negative(z, out=z)
    np.exp(z, out=z)
    z += 1.0
    np.reciprocal(z, out=z)
    return z


def phase_b(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, depth: int, phase: int) -> np.ndarray:
    """The weight-tied deep MLP with runtime for/if (`cflow.kernels.inference`)."""
    hidden = x
    for layer in range(depth):
        z = hidden @ weight
        z += bias
        if (layer + phase) % 2 == 0:
            hidden = np.maximum(z, 0.0, out=z)
        else:
            hidden = _sigmoid(z)
    return hidden.mean(axis=1)


def _softmax_rows(logits: np.ndarray) -> np.ndarray:
    """`torch.softmax(logits, dim=1)` (in place on the owned temporary `logits`)."""
    logits -= logits.max(axis=1, keepdims=True)
    np.exp(logits, out=logits)
    logits /= logits.sum(axis=1, keepdims=True)
    return logits


def scoring_probabilities(
    x: np.ndarray, mean: np.ndarray, scale: np.ndarray, w1: np.ndarray, b1: np.ndarray,
    w2: np.ndarray, b2: np.ndarray, rounds: int,
) -> np.ndarray:
    """normalize -> linear -> relu/tanh rounds -> linear -> softmax (`probabilities`)."""
    normalized = x - mean
    normalized /= scale
    hidden = normalized @ w1.T
    hidden += b1
    for step in range(rounds):
        if step % 2 == 0:
            np.maximum(hidden, 0.0, out=hidden)
        else:
            np.tanh(hidden, out=hidden)
    logits = hidden @ w2.T
    logits += b2
    return _softmax_rows(logits)


def scoring(
    x: np.ndarray, mean: np.ndarray, scale: np.ndarray, w1: np.ndarray, b1: np.ndarray,
    w2: np.ndarray, b2: np.ndarray, rounds: int,
) -> np.ndarray:
    """`classify`: the probabilities' argmax per row (int64 labels)."""
    probs = scoring_probabilities(x, mean, scale, w1, b1, w2, b2, rounds)
    return probs.argmax(axis=1).astype(np.int64, copy=False)
