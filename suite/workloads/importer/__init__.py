"""Bring your own model: workload files, Hugging Face-style configs and PyTorch models.

Three ways in, one way out (a workload file that ``--workload my-model.toml`` accepts):

* :func:`from_torch` traces a PyTorch ``nn.Module`` (``torch.fx``, falling back to forward
  hooks) into a :class:`~suite.workloads.LayerTable` with the zoo's conventions (needs the
  optional ``[torch]`` extra; see :mod:`suite.workloads.importer.torch_trace`).
* :func:`from_hf_config` builds a transformer layer table from a Hugging Face-style
  ``config.json`` (hidden size, layers, heads, KV heads, FFN width, vocabulary); no download,
  no torch (see :mod:`suite.workloads.importer.hf`).
* :func:`write_workload_file` / :func:`load_workload_file` write and read the TOML workload file
  (format in :mod:`suite.workloads.importer.tomlfile`).

The command line is ``suite workloads import --torch package.module:factory --input-shape
1,3,224,224 -o my-model.toml`` or ``suite workloads import --hf-config config.json -o llm.toml``.
"""

from __future__ import annotations

from typing import Any

from suite.workloads.types import LayerTable

from suite.workloads.importer.hf import from_hf_config, spec_from_hf_config
from suite.workloads.importer.tomlfile import FORMAT, load_workload_file, write_workload_file

__all__ = ["from_torch", "from_hf_config", "spec_from_hf_config", "load_workload_file",
           "write_workload_file", "FORMAT"]


def from_torch(*args: Any, **kwargs: Any) -> LayerTable:
    """Trace a PyTorch model into a layer table: see
    :func:`suite.workloads.importer.torch_trace.from_torch` (imported lazily: torch is optional)."""
    from suite.workloads.importer.torch_trace import from_torch as _from_torch

    return _from_torch(*args, **kwargs)
