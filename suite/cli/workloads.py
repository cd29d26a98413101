"""``suite workloads list|show``: the model zoo and datasets."""

from __future__ import annotations


import click

from suite.cli import main
from suite.cli.common import emit, format_option, strict_json

LAYER_COLUMNS = ["name", "kind", "input_shape", "output_shape", "params", "fwd_flops", "bwd_data_flops",
                 "bwd_weight_flops", "activation_bytes", "workspace_bytes", "grad_shape"]


def _summary(name: str) -> dict:
    from suite.cli.common import get_context
    from suite.workloads.types import Dataset, LayerTable

    lib = get_context().workloads
    wl = lib.get(name)
    row: dict = {"name": name, "kind": wl.kind, "provider": lib.provider(name), "source": wl.source,
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
