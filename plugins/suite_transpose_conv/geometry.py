"""Output-size arithmetic of a transpose convolution (PyTorch ``ConvTranspose2d`` semantics).

Kept apart from :mod:`suite_transpose_conv.ops` (the numpy implementations, which re-export
:func:`output_size`) so that :mod:`suite_transpose_conv.layers`, and through it the technique's
declaration, import no numpy.
"""

from __future__ import annotations

from suite.api import ParameterError

__all__ = ["output_size"]


def output_size(h: int, k: int, s: int, p: int, op: int = 0) -> int:
    """Transpose-convolution output size along one axis: ``(h - 1) s - 2 p + k + op``.

    Raises
    ------
    ParameterError
        A size, kernel or stride below 1, negative padding, ``op`` outside ``[0, s)``, or an
        output size below 1.
    """
    if h < 1 or k < 1 or s < 1:
        raise ParameterError(f"transpose conv: expected input size, kernel and stride >= 1, got h={h}, k={k}, s={s}")
    if p < 0:
        raise ParameterError(f"transpose conv: expected padding >= 0, got {p}")
    if not 0 <= op < s:
        raise ParameterError(f"transpose conv: expected 0 <= output_padding < stride ({s}), got {op}")
    ho = (h - 1) * s - 2 * p + k + op
    if ho < 1:
        raise ParameterError(f"transpose conv: output size (h-1)s-2p+k+op = {ho} < 1 for h={h}, k={k}, s={s}, p={p}, op={op}")
    return ho
