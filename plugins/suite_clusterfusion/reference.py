"""The unfused float64 reference decode step: the oracle the execute fidelity and the tests check against.

Written from the model definitions, independently of the fused dataflow: keys and values are
materialised explicitly (for MLA, K and V per head are up-projected from the latent cache, no
absorption), and the softmax is the full one, ``exp(s - logsumexp(s))`` with
:func:`scipy.special.logsumexp`, over the whole sequence at once.

* **MHA** (Llama-2 [Touvron23]): ``q, k, v = x W_q, x W_k, x W_v`` per head, rotary embedding on
  ``q`` and ``k`` at position S (rotate-half convention, base 10000 [Su21]), K = [K_cache; k],
  V = [V_cache; v], ``o = softmax(q K^T / sqrt(d)) V``, ``y = [o_1 .. o_H] W_o``.
* **MLA** (DeepSeek-V2 [DSV2, Sec. 2.1]): ``[c, k_r] = x W_kva`` (latent c of rank r and the
  decoupled RoPE key, shared by all heads), ``q = x W_q`` split per head into ``q_n`` (no RoPE)
  and ``q_r`` (RoPE); per head ``K_n = C W_uk``, ``V = C W_uv`` from the latent cache C;
  ``s = (q_n K_n^T + q_r K_r^T) / sqrt(d_n + d_r)``; ``o = softmax(s) V``; ``y = [o_h] W_o``.

References
----------
.. [Touvron23] H. Touvron et al., "Llama 2", arXiv:2307.09288.
.. [Su21] J. Su et al., "RoFormer: Enhanced Transformer with Rotary Position Embedding", arXiv:2104.09864.
.. [DSV2] DeepSeek-AI, "DeepSeek-V2", arXiv:2405.04434, Sec. 2.1 (MLA) and Appendix C (absorption).
"""

from __future__ import annotations

import numpy as np

__all__ = ["rope", "reference_mha", "reference_mla"]


def rope(x: np.ndarray, pos: int, base: float = 10000.0) -> np.ndarray:
    """Rotary embedding of the last axis (even width d) at position *pos* (rotate-half convention [Su21])."""
    d = x.shape[-1]
    half = d // 2
    inv = base ** (-np.arange(half, dtype=np.float64) / half)
    ang = pos * inv
    cos, sin = np.cos(ang).astype(x.dtype), np.sin(ang).astype(x.dtype)
    x1, x2 = x[..., :half], x[..., half:]
    return np.concatenate([x1 * cos - x2 * sin, x1 * sin + x2 * cos], axis=-1)


def _softmax_rows(s: np.ndarray) -> np.ndarray:
    from scipy.special import logsumexp  # imported here: scipy.special costs ~0.1 s at start-up

    return np.exp(s - logsumexp(s, axis=-1, keepdims=True))


def reference_mha(x, wq, wk, wv, wo, k_cache, v_cache, heads: int) -> np.ndarray:
    """One decode step of multi-head attention in float64.

    Parameters
    ----------
    x : ndarray, (B, h)
    wq, wk, wv : ndarray, (h, H d)
    wo : ndarray, (H d, h)
    k_cache, v_cache : ndarray, (B, H, S, d)
        Past keys (already rotated) and values.
    heads : int
        H.

    Returns
    -------
    ndarray, (B, h), float64
    """
    x = np.asarray(x, np.float64)
    b, _ = x.shape
    s = k_cache.shape[2]
    d = wq.shape[1] // heads
    q = rope((x @ wq.astype(np.float64)).reshape(b, heads, d), s)
    k = rope((x @ wk.astype(np.float64)).reshape(b, heads, d), s)
    v = (x @ wv.astype(np.float64)).reshape(b, heads, d)
    kk = np.concatenate([k_cache.astype(np.float64), k[:, :, None, :]], axis=2)
    vv = np.concatenate([v_cache.astype(np.float64), v[:, :, None, :]], axis=2)
    scores = np.einsum("bhd,bhsd->bhs", q, kk) / np.sqrt(d)
    o = np.einsum("bhs,bhsd->bhd", _softmax_rows(scores), vv)
    return o.reshape(b, heads * d) @ wo.astype(np.float64)


def reference_mla(x, wq, wkva, wuk, wuv, wo, c_cache, kr_cache, heads: int, d_nope: int, d_rope: int) -> np.ndarray:
    """One decode step of multi-head latent attention in float64, K and V materialised (no absorption).

    Parameters
    ----------
    x : ndarray, (B, h)
    wq : ndarray, (h, H (d_n + d_r))
    wkva : ndarray, (h, r + d_r)
    wuk : ndarray, (H, r, d_n)
        Per-head key up-projection of the latent.
    wuv : ndarray, (H, r, d_v)
    wo : ndarray, (H d_v, h)
    c_cache : ndarray, (B, S, r)
        Past latents.
    kr_cache : ndarray, (B, S, d_r)
        Past RoPE keys (already rotated).
    heads, d_nope, d_rope : int

    Returns
    -------
    ndarray, (B, h), float64
    """
    f = np.float64
    x = np.asarray(x, f)
    b = x.shape[0]
    s, r = c_cache.shape[1], c_cache.shape[2]
    q = (x @ wq.astype(f)).reshape(b, heads, d_nope + d_rope)
    qn, qr = q[..., :d_nope], rope(q[..., d_nope:], s)
    lat = x @ wkva.astype(f)
    c_new, kr_new = lat[:, :r], rope(lat[:, r:], s)
    cc = np.concatenate([c_cache.astype(f), c_new[:, None, :]], axis=1)  # (B, S+1, r)
    kr = np.concatenate([kr_cache.astype(f), kr_new[:, None, :]], axis=1)  # (B, S+1, d_r)
    kn = np.einsum("bsr,hrd->bhsd", cc, wuk.astype(f))  # explicit keys
    vv = np.einsum("bsr,hrd->bhsd", cc, wuv.astype(f))  # explicit values
    scores = (np.einsum("bhd,bhsd->bhs", qn, kn) + np.einsum("bhd,bsd->bhs", qr, kr)) / np.sqrt(d_nope + d_rope)
    o = np.einsum("bhs,bhsd->bhd", _softmax_rows(scores), vv)
    return o.reshape(b, -1) @ wo.astype(f)
