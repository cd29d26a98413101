"""DFLOP's workloads: the two modules of the authors' default pair and three dataset mixes.

* ``siglip-6b-dflop``: the vision encoder of the authors' default configuration ("SigLIP 6B" in
  ``BDAI-Research/DFLOP`` ``configs/dflop_config.yaml``; the code, a secondary source): 40 layers,
  hidden 2304, 48 heads, MLP 8608, 384 px images with patch 14, i.e. (384 // 14)^2 = 729 tokens per
  image. With these dimensions the stack holds 2.44e9 parameters (the "6B" of the name is the
  code's label, not a count we can reproduce).
* ``qwen2.5-7b``: the LLM, as its published configuration (Qwen2.5 technical report, arXiv
  2412.15115, Table 1, and the released ``config.json``): 28 layers, hidden 3584, 28 query / 4 KV
  heads, FFN 18944, vocabulary 152064, untied embeddings: 7.62e9 parameters (the release's 7.61B).
* ``dflop-llava-ov``, ``dflop-m4-instruct``, ``dflop-llava-video``: seeded generators of sample
  shapes for LLaVA-OneVision single-image, M4-Instruct multi-image and LLaVA-Video-178K (the
  datasets named in the authors' README). The data cannot be downloaded offline, so the mixture
  weights and length distributions below are ASSUMPTIONS (declared in each workload's
  ``description`` and in docs/techniques/dflop.md), not measurements.

A sample is (tiles, llm_tokens_per_tile, text_tokens): ``tiles`` 384-px crops or frames through
the encoder, each giving ``llm_tokens_per_tile`` tokens to the LLM (729; 196 for video frames,
LLaVA-OneVision's 2x2 bilinear pooling of frame features, Li et al. arXiv 2408.03326 §4), plus
``text_tokens`` of text.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING

from suite.api import Workload

if TYPE_CHECKING:  # numpy is imported where samples are drawn, so the declaration does not pay for it
    import numpy as np

__all__ = ["ModuleSpec", "MixWorkload", "Samples", "SIGLIP", "QWEN", "MIXES", "all_workloads", "mix",
           "generate"]


@dataclass(frozen=True)
class ModuleSpec(Workload):
    """A transformer module by its hyperparameters (the FLOP formulas need nothing else).

    Attributes
    ----------
    layers, hidden, heads, kv_heads, ffn : int
        Depth, width, query heads, key/value heads (GQA), MLP width.
    gated : bool
        Gated (SwiGLU, three matrices) MLP instead of two matrices.
    vocab : int
        Vocabulary (0 for an encoder).
    image, patch : int
        Input resolution and patch size (px) of a vision encoder (0 for an LLM).
    """

    layers: int = 1
    hidden: int = 1
    heads: int = 1
    kv_heads: int = 1
    ffn: int = 1
    gated: bool = False
    vocab: int = 0
    image: int = 0
    patch: int = 0

    @property
    def tokens_per_image(self) -> int:
        """Patch tokens of one image, ``(image // patch)^2`` (729 for 384 px, patch 14)."""
        return (self.image // self.patch) ** 2 if self.patch else 0

    @property
    def shape(self):
        """The shared training model's :class:`~suite.perf.training.TransformerShape` of this
        module (its FLOP and activation counts come from there; ``seq`` is a placeholder, every
        count used takes the tokens explicitly)."""
        return _shape_of(self)

    @property
    def params(self) -> int:
        """Parameters of the layer stack, embeddings and head (biases and norms omitted for
        the LLM; the encoder's biases and LayerNorms included)."""
        h, f = self.hidden, self.ffn
        kv = h * self.kv_heads // self.heads
        if self.vocab:  # Qwen2.5: QKV biases, no other bias, RMSNorm; untied embedding and head
            attn = 2 * h * h + 2 * h * kv + (h + 2 * kv)
            mlp = (3 if self.gated else 2) * h * f
            return self.layers * (attn + mlp + 2 * h) + 2 * self.vocab * h + h
        attn = 4 * h * h + 4 * h
        mlp = 2 * h * f + f + h
        patch_embed = 3 * self.patch * self.patch * h + h + self.tokens_per_image * h
        return self.layers * (attn + mlp + 4 * h) + patch_embed + 2 * h


@functools.lru_cache(maxsize=8)
def _shape_of(spec: ModuleSpec):
    from suite.api import TransformerShape  # numpy: not at declaration time

    return TransformerShape(layers=spec.layers, hidden=spec.hidden, heads=spec.heads, seq=max(spec.tokens_per_image, 1),
                            vocab=spec.vocab, ffn=spec.ffn, kv_heads=spec.kv_heads, gated=spec.gated, tied=False,
                            name=spec.name)


SIGLIP = ModuleSpec(
    name="siglip-6b-dflop", kind="transformer-spec",
    source="BDAI-Research/DFLOP configs/dflop_config.yaml @ 1ad846e (secondary: the authors' code)",
    description="vision encoder of the authors' default pair: 40 layers, hidden 2304, 48 heads, MLP 8608, "
                "384 px, patch 14 (729 tokens per image)",
    layers=40, hidden=2304, heads=48, kv_heads=48, ffn=8608, image=384, patch=14)

QWEN = ModuleSpec(
    name="qwen2.5-7b", kind="transformer-spec",
    source="Qwen2.5 technical report (arXiv 2412.15115) Table 1 and the released config.json",
    description="Qwen2.5-7B: 28 layers, hidden 3584, 28 query / 4 KV heads, SwiGLU FFN 18944, vocab 152064",
    layers=28, hidden=3584, heads=28, kv_heads=4, ffn=18944, gated=True, vocab=152064)


@dataclass(frozen=True)
class MixWorkload(Workload):
    """A multimodal dataset mix: a seeded generator of sample shapes (assumed, see module doc).

    Attributes
    ----------
    p_text, p_image, p_multi, p_video : float
        Mixture weights of text-only, single-image (AnyRes tiles), multi-image and video samples.
    tiles : (int, int)
        Tiles of a single image, uniform on [lo, hi] (AnyRes-9: base view + up to 9 crops).
    images : (int, int)
        Images of a multi-image sample, uniform on [lo, hi].
    frames : (int, int)
        Frames of a video sample, uniform on [lo, hi] (tokens per frame: ``frame_tokens``).
    text_median, text_sigma : float
        Text tokens ~ lognormal(log median, sigma), clipped to [16, 8192].
    vision, llm : str
        The module workloads.
    """

    p_text: float = 0.0
    p_image: float = 1.0
    p_multi: float = 0.0
    p_video: float = 0.0
    tiles: tuple[int, int] = (1, 1)
    images: tuple[int, int] = (2, 2)
    frames: tuple[int, int] = (8, 8)
    frame_tokens: int = 196
    text_median: float = 256.0
    text_sigma: float = 1.0
    vision: str = "siglip-6b-dflop"
    llm: str = "qwen2.5-7b"


_ASSUME = "ASSUMED mixture (the dataset cannot be downloaded offline): "

MIXES = {
    "dflop-llava-ov": MixWorkload(
        name="dflop-llava-ov", kind="multimodal-mix", source="LLaVA-OneVision-Data (single image), authors' README",
        description=_ASSUME + "5% text-only, 95% one image of 1-10 AnyRes tiles; text lognormal median 256, sigma 1.0",
        p_text=0.05, p_image=0.95, tiles=(1, 10), text_median=256.0, text_sigma=1.0),
    "dflop-m4-instruct": MixWorkload(
        name="dflop-m4-instruct", kind="multimodal-mix", source="M4-Instruct-Data (multi-image), authors' README",
        description=_ASSUME + "10% single image (1 tile), 90% 2-12 images of one tile; text lognormal median 384, "
                              "sigma 1.0",
        p_image=0.10, p_multi=0.90, tiles=(1, 1), images=(2, 12), text_median=384.0, text_sigma=1.0),
    "dflop-llava-video": MixWorkload(
        name="dflop-llava-video", kind="multimodal-mix", source="LLaVA-Video-178K (video), authors' README",
        description=_ASSUME + "20% single image (1-10 tiles), 80% video of 8-64 frames (196 LLM tokens each); "
                              "text lognormal median 192, sigma 1.0",
        p_image=0.20, p_video=0.80, tiles=(1, 10), frames=(8, 64), text_median=192.0, text_sigma=1.0),
}


@dataclass(frozen=True)
class Samples:
    """Shapes of n samples (arrays of shape (n,), int).

    ``tiles``: encoder inputs (384-px images or frames); ``image_tokens``: LLM tokens from them;
    ``text``: text tokens. ``seq = image_tokens + text`` is the LLM sequence.
    """

    tiles: np.ndarray
    image_tokens: np.ndarray
    text: np.ndarray

    @property
    def seq(self) -> np.ndarray:
        return self.image_tokens + self.text

    def __len__(self) -> int:
        return int(self.tiles.shape[0])


def generate(m: MixWorkload, n: int, seed: int = 0, skew: float = 1.0) -> Samples:
    """Draw *n* sample shapes from mix *m* with a seeded generator.

    ``skew`` scales the text sigma and the spread of tiles / images / frames around their
    midpoints (0: every sample of a kind identical; 1: the mix as declared).

    Raises
    ------
    ValueError
        ``n < 1`` or ``skew < 0``.
    """
    import numpy as np

    if n < 1 or skew < 0:
        raise ValueError(f"dflop: generate needs n >= 1 and skew >= 0, got n={n}, skew={skew}")
    rng = np.random.default_rng(seed)
    w = np.array([m.p_text, m.p_image, m.p_multi, m.p_video], dtype=float)
    kind = rng.choice(4, size=n, p=w / w.sum())

    def spread(lo_hi):
        lo, hi = lo_hi
        mid = 0.5 * (lo + hi)
        x = rng.integers(lo, hi + 1, size=n).astype(float)
        return np.maximum(1, np.rint(mid + skew * (x - mid))).astype(np.int64)

    tiles_i, imgs, frames = spread(m.tiles), spread(m.images), spread(m.frames)
    tpi = SIGLIP.tokens_per_image
    tiles = np.select([kind == 0, kind == 1, kind == 2, kind == 3], [0, tiles_i, imgs, frames])
    image_tokens = np.select([kind == 0, kind == 1, kind == 2, kind == 3],
                             [0, tiles_i * tpi, imgs * tpi, frames * m.frame_tokens])
    text = np.clip(np.rint(m.text_median * np.exp(skew * m.text_sigma * rng.standard_normal(n))), 16, 8192)
    return Samples(tiles.astype(np.int64), image_tokens.astype(np.int64), text.astype(np.int64))


def mix(name: str) -> MixWorkload:
    """A mix by name (KeyError naming the known ones otherwise)."""
    try:
        return MIXES[name]
    except KeyError:
        raise KeyError(f"dflop: unknown dataset mix {name!r}; expected one of {sorted(MIXES)}") from None


@functools.lru_cache(maxsize=1)
def all_workloads() -> list:
    """Every workload this plugin registers (the two modules and the three mixes)."""
    return [SIGLIP, QWEN, *MIXES.values()]
