"""CoCoD-SGD docs tables: the claims' compute and all-reduce times and the speed-up's sensitivity.

Evaluates the model fidelity at the claims' scenario (``gtx1080ti-6x3-ib56``, 16 workers, fp32,
efficiency 0.5, homogeneous workers, batch 128, k = 4) and prints, as docs/techniques/cocod-sgd.md
shows them: S-SGD's compute and all-reduce time per iteration and the overlap bound
``1 + t_AR / t_c`` for each workload; CoCoD-SGD's speed-up over S-SGD for batch 16-128 and
k = 1-16; with heterogeneous workers (``hetero = 2``); and with the hierarchical all-reduce.

Usage::

    python benchmarks/cocod_sgd_tables.py
"""

from __future__ import annotations

WORKLOADS = ("resnet-18-cifar", "vgg16-cifar")
BATCHES = (16, 32, 64, 128)
KS = (1, 2, 4, 8, 16)


def evaluate(context, workload: str, variant: str = "cocod-sgd", **params):
    """The model result of one variant at the claims' scenario, *params* changed."""
    from suite.runner import expand_entry

    p = {"workers": 16, "hetero": 1.0, **params}
    entry = {"technique": "cocod-sgd", "profile": "gtx1080ti-6x3-ib56", "workload": workload, "variant": variant,
             "params": {k: [v] for k, v in p.items()}}
    case = next(iter(expand_entry(entry, context=context).cases))
    return case.tech.evaluate(case.scenario)


def _cells(speedups: list[float]) -> str:
    """``1.65 (all k)`` when every k gives the same speed-up, else the values joined by `` / ``."""
    shown = [f"{s:.2f}" for s in speedups]
    return f"{shown[0]} (all k)" if len(set(shown)) == 1 else " / ".join(shown)


def main() -> int:
    from suite.context import Context

    ctx = Context.build()
    print("| workload | t_c (ms) | t_AR (ms) | bound 1 + t_AR/t_c | ours (k = 4) | hetero = 2 | hierarchical: t_AR (ms), ours |")
    print("|---|---|---|---|---|---|---|")
    sens = {}
    for wl in WORKLOADS:
        s, ours = evaluate(ctx, wl, "s-sgd"), evaluate(ctx, wl)
        hs, hier = evaluate(ctx, wl, "s-sgd", algorithm="hierarchical"), evaluate(ctx, wl, algorithm="hierarchical")
        print(f"| {wl} | {1e3 * s['compute_time']:.2f} | {1e3 * s['allreduce_time']:.2f} | "
              f"{1 + s['allreduce_time'] / s['compute_time']:.4f} | {ours['speedup']:.4f} | "
              f"{evaluate(ctx, wl, hetero=2.0)['speedup']:.4f} | {1e3 * hs['allreduce_time']:.2f}, {hier['speedup']:.4f} |")
        sens[wl] = {b: [evaluate(ctx, wl, batch=b, k=k)["speedup"] for k in KS] for b in BATCHES}
    print("\n| batch per GPU | ResNet-18 k=1 / 2 / 4 / 8 / 16 | VGG-16 k=1 / 2 / 4 / 8 / 16 |")
    print("|---|---|---|")
    for b in BATCHES:
        label = f"{b} (claims)" if b == 128 else str(b)
        print(f"| {label} | {_cells(sens[WORKLOADS[0]][b])} | {_cells(sens[WORKLOADS[1]][b])} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
