"""The softmax classifier on a flat parameter vector the simulated workers train (exact
gradients; checked against finite differences in tests/test_dataparallel.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from suite.errors import ParameterError

__all__ = ['FlatModel']


@dataclass(frozen=True)
class FlatModel:
    """Softmax classifier on a flat parameter vector.

    ``hidden = 0``: multinomial logistic regression, ``theta = [W (d, k), b (k)]``;
    ``hidden = h``: ``softmax(relu(X W1 + b1) W2 + b2)``, ``theta = [W1, b1, W2, b2]`` flattened
    in that order. Loss: mean cross-entropy plus ``l2/2 ||W||^2`` (weights only).
    """

    d: int
    k: int
    hidden: int = 0
    l2: float = 0.0

    @property
    def shapes(self) -> list[tuple[int, ...]]:
        if self.hidden == 0:
            return [(self.d, self.k), (self.k,)]
        return [(self.d, self.hidden), (self.hidden,), (self.hidden, self.k), (self.k,)]

    @property
    def size(self) -> int:
        return int(sum(math.prod(s) for s in self.shapes))

    @property
    def flops_per_sample(self) -> float:
        """Forward + backward FLOPs per sample: 3 x forward, forward = 2 x MACs (workload convention)."""
        macs = self.d * self.k if self.hidden == 0 else self.d * self.hidden + self.hidden * self.k
        return 3.0 * 2.0 * macs

    def init(self, rng: np.random.Generator) -> np.ndarray:
        """He-normal weights (zero for logistic regression), zero biases."""
        parts = []
        for s in self.shapes:
            if len(s) == 2 and self.hidden > 0:
                parts.append(rng.normal(0.0, math.sqrt(2.0 / s[0]), size=s).ravel())
            else:
                parts.append(np.zeros(math.prod(s)))
        return np.concatenate(parts)

    def unpack(self, theta: np.ndarray) -> list[np.ndarray]:
        out, o = [], 0
        for s in self.shapes:
            n = math.prod(s)
            out.append(theta[o:o + n].reshape(s))
            o += n
        return out

    def logits(self, theta: np.ndarray, X: np.ndarray) -> np.ndarray:
        p = self.unpack(theta)
        if self.hidden == 0:
            return np.asarray(X @ p[0] + p[1])
        h = np.maximum(X @ p[0] + p[1], 0.0)
        return np.asarray(h @ p[2] + p[3])

    def _reg(self, theta: np.ndarray) -> float:
        if self.l2 == 0:
            return 0.0
        return 0.5 * self.l2 * sum(float(np.sum(w * w)) for w in self.unpack(theta)[::2])

    def loss_acc(self, theta: np.ndarray, X: np.ndarray, y: np.ndarray) -> tuple[float, float]:
        """(mean cross-entropy + L2 term, accuracy) on (X, y)."""
        z = self.logits(theta, X)
        z = z - z.max(axis=1, keepdims=True)
        logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
        return (float(-logp[np.arange(len(y)), y].mean()) + self._reg(theta),
                float((z.argmax(axis=1) == y).mean()))

    def loss_grad(self, theta: np.ndarray, X: np.ndarray, y: np.ndarray,
                  reduction: str = "mean") -> tuple[float, np.ndarray]:
        """Loss and its exact gradient (flat, same layout as theta) on the batch (X, y).

        ``reduction="mean"`` (default): the mean per-sample loss ``l_j = CE_j + l2/2 ||W||^2``
        and its gradient; ``"sum"``: their sums over the batch, ``sum_j l_j`` and
        ``sum_j grad l_j`` (so the L2 term is counted once per sample). A sum over an empty
        batch is ``(0.0, zeros)``; a mean over one raises :class:`ParameterError`.
        """
        if reduction not in ("mean", "sum"):
            raise ParameterError(f"FlatModel.loss_grad: reduction must be 'mean' or 'sum', got {reduction!r}")
        n = len(y)
        if n == 0:
            if reduction == "sum":
                return 0.0, np.zeros(self.size)
            raise ParameterError("FlatModel.loss_grad: the mean over an empty batch is undefined")
        p = self.unpack(theta)
        if self.hidden == 0:
            z = X @ p[0] + p[1]
        else:
            a = X @ p[0] + p[1]
            h = np.maximum(a, 0.0)
            z = h @ p[2] + p[3]
        z = z - z.max(axis=1, keepdims=True)
        e = np.exp(z)
        s = e.sum(axis=1, keepdims=True)
        ce = np.log(s[:, 0]) - z[np.arange(n), y]
        delta = e / s
        delta[np.arange(n), y] -= 1.0
        if reduction == "mean":
            loss = float(np.mean(ce)) + self._reg(theta)
            delta /= n
            r = self.l2
        else:
            loss = float(np.sum(ce)) + n * self._reg(theta)
            r = n * self.l2
        if self.hidden == 0:
            gW = X.T @ delta + r * p[0]
            return loss, np.concatenate([gW.ravel(), delta.sum(axis=0)])
        gW2 = h.T @ delta + r * p[2]
        gb2 = delta.sum(axis=0)
        dh = (delta @ p[2].T) * (a > 0)
        gW1 = X.T @ dh + r * p[0]
        return loss, np.concatenate([gW1.ravel(), dh.sum(axis=0), gW2.ravel(), gb2])
