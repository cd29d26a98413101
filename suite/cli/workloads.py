"""``suite workloads list|show|import``: the model zoo and datasets, and bringing your own model."""

from __future__ import annotations


from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from suite.cli import main
from suite.cli.common import emit, format_option, strict_json

if TYPE_CHECKING:  # pragma: no cover
    from suite.workloads.types import LayerTable

LAYER_COLUMNS = ["name", "kind", "input_shape", "output_shape", "params", "fwd_flops", "bwd_data_flops",
                 "bwd_weight_flops", "activation_bytes", "workspace_bytes", "grad_shape"]


def _summary(name: str) -> dict[str, Any]:
    from suite.cli.common import get_context
    from suite.workloads.types import Dataset, LayerTable

    lib = get_context().workloads
    wl = lib.get(name)
    row: dict[str, Any] = {"name": wl.name if name.endswith(".toml") else name, "kind": wl.kind,
                 "provider": lib.provider(name), "source": wl.source,
                 "description": wl.description}
    if isinstance(wl, LayerTable):
        row.update({"params": wl.params, "published_params": wl.published_params,
                    "fwd_flops": wl.fwd_flops, "bwd_flops": wl.bwd_flops,
                    "activation_bytes": wl.activation_bytes, "layers": len(wl.layers)})
    elif isinstance(wl, Dataset):
        row.update({"n": wl.n, "d": wl.d, "classes": wl.classes})
    return row


@main.group("workloads")
def workloads_group() -> None:
    """The workload zoo: CNN and transformer layer tables, datasets and graphs."""


@workloads_group.command("list")
@click.option("--kind", help="Only this kind (cnn, gan, transformer, dataset, graph).")
@format_option("table", "json", "csv")
def list_cmd(kind: str | None, fmt: str) -> None:
    """Every registered workload (families such as resnet-<depth> by one example)."""
    from suite.cli.common import get_context

    rows = [_summary(n) for n in get_context().workloads.names()]
    if kind:
        rows = [r for r in rows if r["kind"] == kind]
    if fmt == "table":
        for r in rows:
            if "fwd_flops" in r:
                r["params"] = f"{r['params']:,}"
                r["GFLOP/sample"] = f"{r['fwd_flops'] / 1e9:.4g}"
            elif r.get("n") is not None:
                r["params"] = f"n={r['n']} d={r['d']} classes={r['classes']}"
        emit(rows, fmt, ["name", "kind", "params", "GFLOP/sample", "provider"],
             title="workloads (FLOPs: forward, per sample; resnet-<depth> accepts other depths)")
    else:
        emit(rows, fmt, ["name", "kind", "provider", "params", "published_params", "fwd_flops", "bwd_flops",
                         "activation_bytes", "layers", "n", "d", "classes", "source", "description"])


@workloads_group.command("show")
@click.argument("name")
@click.option("--layers", "show_layers", is_flag=True, help="Print the per-layer table.")
@format_option("table", "json", "csv")
def show_cmd(name: str, show_layers: bool, fmt: str) -> None:
    """Totals of one workload; with --layers its per-layer table."""
    from suite.cli.common import get_context
    from suite.workloads.types import Dataset, LayerTable

    wl = get_context().workloads.get(name)
    if show_layers:
        if not isinstance(wl, LayerTable):
            from suite.errors import WorkloadError

            raise WorkloadError(f"workload {name!r} is a {wl.kind}, it has no layers; drop --layers")
        rows = [{c: getattr(l, c) for c in LAYER_COLUMNS} | {"inputs": l.attrs.get("inputs")} for l in wl.layers]
        if fmt == "csv":
            for r in rows:
                for c in ("input_shape", "output_shape", "grad_shape", "inputs"):
                    r[c] = "x".join(map(str, r[c])) if c != "inputs" and r[c] else (";".join(r[c]) if r[c] else "")
        emit(rows, fmt, LAYER_COLUMNS + ["inputs"], title=f"{name}: layers (per sample)")
        return
    info = _summary(name)
    info["content_hash"] = wl.content_hash()
    if isinstance(wl, LayerTable):
        info["input_shape"] = list(wl.input_shape)
        info["dtype_bytes"] = wl.dtype_bytes
        info["param_bytes"] = wl.param_bytes
        if wl.kind == "transformer":
            from suite.workloads.transformer import activation_memory, training_flops

            for mode in ("none", "selective", "full"):
                info[f"saved_activation_bytes[{mode}]"] = activation_memory(wl, mode)
                info[f"train_flops[{mode}]"] = training_flops(wl, mode)
    elif isinstance(wl, Dataset):
        from suite.workloads.datasets import data_hash

        info["params"] = wl.params
        # datasets described only by their size (a paper's data, not shipped) have no loader
        info["data_hash"] = data_hash(wl) if wl.loader is not None else "(no local data: described by n, d only)"
    if fmt == "json":
        click.echo(strict_json(info, indent=2, default=str))
        return
    rows = [{"field": k, "value": (f"{v:,}" if isinstance(v, int) and not isinstance(v, bool) else
                                   f"{v:.6g}" if isinstance(v, float) else v)} for k, v in info.items()]
    emit(rows, fmt, ["field", "value"], title=name)


def _kwargs(pairs: tuple[str, ...]) -> dict[str, Any]:
    import ast

    from suite.errors import WorkloadError

    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key.isidentifier():
            raise WorkloadError(f"--arg: expected NAME=VALUE (e.g. num_classes=10), given {pair!r}")
        try:
            out[key] = ast.literal_eval(raw)
        except (ValueError, SyntaxError):
            out[key] = raw  # a bare word is a string
    return out


@workloads_group.command("import")
@click.option("--torch", "torch_ref", metavar="MODULE:FACTORY",
              help="Trace a PyTorch model: a callable (or nn.Module) such as torchvision.models:resnet50.")
@click.option("--hf-config", "hf_config", type=click.Path(dir_okay=False),
              help="Build a transformer from a Hugging Face-style config.json (no download, no torch).")
@click.option("--input-shape", "input_shapes", multiple=True, metavar="B,C,H,W",
              help="--torch: the input's shape, batch first (repeat for several inputs).")
@click.option("--input-dtype", default="float32", show_default=True,
              type=click.Choice(["float32", "float16", "bfloat16", "int64"]), help="--torch: input element type.")
@click.option("--arg", "args", multiple=True, metavar="NAME=VALUE",
              help="--torch: keyword argument for the factory (Python literal), e.g. num_classes=10.")
@click.option("--method", default="auto", show_default=True, type=click.Choice(["auto", "fx", "hooks"]),
              help="--torch: torch.fx, forward hooks, or fx falling back to hooks.")
@click.option("--train", is_flag=True, help="--torch: trace in training mode (default eval).")
@click.option("--seq", type=click.IntRange(min=1), help="--hf-config: sequence length (default: max positions).")
@click.option("--name", help="Workload name (default: the output file's stem, else the factory / model name).")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Workload file to write (default NAME.toml).")
@click.option("--force", is_flag=True, help="Overwrite an existing output file.")
@format_option("table", "json")
def import_cmd(torch_ref: str | None, hf_config: str | None, input_shapes: tuple[str, ...], input_dtype: str,
               args: tuple[str, ...], method: str, train: bool, seq: int | None, name: str | None,
               output: str | None, force: bool, fmt: str) -> None:
    """Write a workload file from your own model, for --workload FILE.toml.

    \b
    suite workloads import --torch torchvision.models:resnet50 --input-shape 1,3,224,224 -o my-model.toml
    suite workloads import --hf-config config.json -o my-llm.toml
    suite run --technique poseidon --workload my-model.toml ...
    """
    from pathlib import Path

    from suite.cli.common import get_context
    from suite.errors import WorkloadError
    from suite.workloads import importer

    if bool(torch_ref) == bool(hf_config):
        raise WorkloadError("suite workloads import: expected exactly one of --torch MODULE:FACTORY or "
                            "--hf-config FILE")
    lib = get_context().workloads

    def pick(default: str) -> str:
        return _new_name(default, name, output, lib)

    if torch_ref:
        table, spec_fields, origin = _import_torch(torch_ref, input_shapes, input_dtype, args, method, train,
                                                   seq, pick)
    else:
        if input_shapes or args or train or method != "auto":
            raise WorkloadError("--input-shape, --arg, --method and --train apply to --torch, not --hf-config")
        assert hf_config is not None  # exactly one of the two was checked above
        table, spec_fields, origin = _import_hf(hf_config, seq, pick)
    out = Path(output) if output else Path(f"{table.name}.toml")
    if out.exists() and not force:
        raise WorkloadError(f"{out}: already exists; expected a new file (or --force)")
    importer.write_workload_file(table, out, transformer_spec=spec_fields,
                                 header=f"written by: {origin}\nuse with: --workload {out}")
    _report_import(table, out, fmt)


def _new_name(default: str, name: str | None, output: str | None, lib: Any) -> str:
    """The imported workload's name: ``--name``, else the output file's stem, else *default*
    (``-imported`` appended when it is taken); a taken name given explicitly is refused."""
    from pathlib import Path

    from suite.errors import WorkloadError

    chosen = name or (Path(output).stem if output else default)
    if chosen in set(lib.names()) or _is_zoo(chosen):
        if name or output:
            raise WorkloadError(f"--name: {chosen!r} is already a workload of {lib.provider(chosen)}; "
                                f"expected a new name")
        chosen = f"{chosen}-imported"
    return chosen


def _import_torch(torch_ref: str, input_shapes: tuple[str, ...], input_dtype: str, args: tuple[str, ...],
                  method: str, train: bool, seq: int | None,
                  pick: Callable[[str], str]) -> tuple[LayerTable, dict[str, Any] | None, str]:
    """``--torch MODULE:FACTORY``: the traced table, no transformer spec, and the command that made it."""
    from suite.errors import WorkloadError
    from suite.workloads import importer
    from suite.workloads.importer.torch_trace import load_factory, parse_shape

    if not input_shapes:
        raise WorkloadError("--torch: expected --input-shape (batch first, e.g. 1,3,224,224)")
    if seq is not None:
        raise WorkloadError("--seq applies to --hf-config; for --torch give the shape in --input-shape")
    shapes = [parse_shape(s) for s in input_shapes]
    factory = load_factory(torch_ref, _kwargs(args))
    wl_name = pick(torch_ref.partition(":")[2].split(".")[-1].lower().replace("_", "-"))
    table = importer.from_torch(factory, shapes, name=wl_name, input_dtype=input_dtype, method=method,
                                train=train, source=f"PyTorch model {torch_ref}"
                                + (f" ({', '.join(args)})" if args else ""))
    origin = f"suite workloads import --torch {torch_ref} " + " ".join(f"--input-shape {s}" for s in input_shapes)
    return table, None, origin


def _import_hf(hf_config: str, seq: int | None,
               pick: Callable[[str], str]) -> tuple[LayerTable, dict[str, Any] | None, str]:
    """``--hf-config FILE``: the transformer table, its spec (written to the file), and the command."""
    from dataclasses import replace
    from pathlib import Path

    from suite.workloads import importer
    from suite.workloads.importer.hf import read_config, spec_fields

    cfg = read_config(hf_config)
    default = (str(cfg.get("_name_or_path") or "").rstrip("/").split("/")[-1]
               or Path(hf_config).resolve().parent.name or "hf-model")
    wl_name = pick(default.lower().replace(" ", "-").replace("_", "-"))
    table = importer.from_hf_config(hf_config, name=wl_name, seq=seq)  # errors name the file
    table = replace(table, source=f"{table.source}; file {Path(hf_config).name}")
    origin = f"suite workloads import --hf-config {hf_config}" + (f" --seq {seq}" if seq else "")
    return table, spec_fields(table), origin


def _report_import(table: LayerTable, out: Path, fmt: str) -> None:
    """What was written: name, file, kind, layers and the table's totals."""
    macs = sum(float(l.attrs.get("macs", 0)) for l in table.layers)
    info = {"name": table.name, "file": str(out), "kind": table.kind, "layers": len(table.layers),
            "params": table.params, "macs": macs if macs else None, "fwd_flops": table.fwd_flops,
            "bwd_flops": table.bwd_flops, "activation_bytes": table.activation_bytes,
            "description": table.description}
    if fmt == "json":
        click.echo(strict_json(info, indent=2, default=str))
        return
    rows = [{"field": k, "value": (f"{v:,}" if isinstance(v, int) else f"{v:.6g}" if isinstance(v, float) else v)}
            for k, v in info.items() if v is not None]
    emit(rows, fmt, ["field", "value"], title=f"wrote {out} (use: --workload {out})")


def _is_zoo(name: str) -> bool:
    import suite.workloads as W

    return W.zoo_has(name)
