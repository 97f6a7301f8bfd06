#!/usr/bin/python3
"""RaPP-style latency predictor on the V100 labels: cross-validation and ONNX export (issue 12).

Reads ../shared/data/latency/rapp_v100 at run time (no licence: nothing derived from it is kept in
the repository; the exported model goes to --out, a temporary folder).

Model (a simpler stand-in for RaPP's GNN, argued in bench/rapp/README.md): the operator graph is
pooled into a fixed vector (mean and log-sum of the 32 static operator features over nodes, mean of
the 6 runtime ones), joined to the graph features (5 static, 5 runtime) and the configuration
(batch, SM share, quota and their logs), and an MLP predicts ln(latency). Baselines:
- static: the same MLP without runtime features (DIPPM-like: what a model's graph alone tells);
- analytic: latency = c_m · batch / (share · quota), c_m fitted per model in log space (on the
  training rows for unseen configurations; on K profiled points of an unseen model).

Splits (seeded): leave-models-out, 5 folds over the 67 models with graph features; unseen
configurations, 20 % of each model's rows held out. MAPE = mean |pred - true| / true.

Usage: /usr/bin/python3 bench/rapp/v100_cv.py --data DIR [--out DIR] [--epochs N] [--seed S]
Prints one JSON object on stdout.
"""
import argparse
import json
import math
import os
import sys
import time

import numpy as np
import torch

STATIC_NODE = slice(0, 32)
RUNTIME_NODE = slice(32, 38)
STATIC_GRAPH = slice(0, 5)
RUNTIME_GRAPH = slice(5, 10)
K_PROFILED = 3


def model_vectors(graphs):
    """Per model: (static vector, runtime vector) pooled from its operator graph."""
    out = {}
    for name, g in graphs.items():
        nf = np.asarray(g["node_features"], dtype=np.float64)
        gf = np.asarray(g["graph_features"], dtype=np.float64)
        st = nf[:, STATIC_NODE]
        static = np.concatenate([st.mean(0), np.log1p(np.abs(st).sum(0)), np.log1p(np.abs(gf[STATIC_GRAPH])), [math.log(len(nf))]])
        runtime = np.concatenate([nf[:, RUNTIME_NODE].mean(0), np.log1p(np.abs(gf[RUNTIME_GRAPH]))])
        out[name] = (static, runtime)
    return out


def config_vector(b, s, q):
    return [b, s, q, math.log(b), math.log(s), math.log(q)]


def load(data_dir):
    root = os.path.join(data_dir, "latency", "rapp_v100")
    graphs = json.load(open(os.path.join(root, "rapp_model_graph_features.json")))
    rows = []
    with open(os.path.join(root, "rapp_latency_bs_sm_quota.csv")) as f:
        next(f)
        for line in f:
            m, b, sm, q, lat = line.strip().split(",")
            if m in graphs:
                rows.append((m, int(b), int(sm) / 100, int(q) / 100, float(lat)))
    return graphs, rows


ANCHOR_QUOTAS = [0.2, 0.4, 0.6, 0.8, 1.0]


def ln_anchor(gf, q):
    """ln of the model's profiled batch-1 latency at quota q: the 5 runtime graph features are
    batch-1 latencies at quotas 0.2..1 (checked against the labels), interpolated in ln; below 0.2
    latency grows as 1/q."""
    ys = [math.log(v) for v in gf[RUNTIME_GRAPH]]
    if q <= ANCHOR_QUOTAS[0]:
        return ys[0] + math.log(ANCHOR_QUOTAS[0] / q)
    for i in range(1, len(ANCHOR_QUOTAS)):
        if q <= ANCHOR_QUOTAS[i] + 1e-9:
            w = (q - ANCHOR_QUOTAS[i - 1]) / (ANCHOR_QUOTAS[i] - ANCHOR_QUOTAS[i - 1])
            return ys[i - 1] * (1 - w) + ys[i] * w
    return ys[-1]


def features(rows, vecs, graphs, runtime):
    """Rows of features; with runtime features the last one is ln(anchor): the model's profiled
    batch-1 latency at the row's quota (`ln_anchor`), which the network adds to its output (it
    predicts the latency relative to the profile's point at that quota)."""
    x = []
    for m, b, s, q, _ in rows:
        st, rt = vecs[m]
        if runtime:
            x.append(np.concatenate([st, rt, config_vector(b, s, q), [ln_anchor(graphs[m]["graph_features"], q)]]))
        else:
            x.append(np.concatenate([st, config_vector(b, s, q)]))
    return np.asarray(x, dtype=np.float32)


class Net(torch.nn.Module):
    """Standardisation inside the network, so the exported ONNX takes raw features."""

    def __init__(self, mean, std, anchored, width=256):
        super().__init__()
        self.anchored = anchored
        self.register_buffer("mean", torch.tensor(mean, dtype=torch.float32))
        self.register_buffer("std", torch.tensor(std, dtype=torch.float32))
        d = len(mean)
        self.body = torch.nn.Sequential(
            torch.nn.Linear(d, width), torch.nn.ReLU(),
            torch.nn.Linear(width, width), torch.nn.ReLU(),
            torch.nn.Linear(width, 1),
        )

    def forward(self, x):
        # clipped: a feature an unseen model has far outside the training models' range (an
        # operator type none of them uses) must not send the network off into extrapolation
        y = self.body(torch.clamp((x - self.mean) / self.std, -6.0, 6.0)).squeeze(-1)
        return y + x[:, -1] if self.anchored else y


def train(x, y, epochs, seed, anchored, width=256, weight_decay=0.0, batch=256):
    torch.manual_seed(seed)
    mean = x.mean(0)
    std = x.std(0) + 1e-3
    net = Net(mean, std, anchored, width)
    opt = torch.optim.AdamW(net.parameters(), lr=2e-3, weight_decay=weight_decay) if weight_decay else torch.optim.Adam(net.parameters(), lr=2e-3)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, epochs)
    xt = torch.from_numpy(x)
    yt = torch.from_numpy(np.log(y).astype(np.float32))
    g = torch.Generator().manual_seed(seed)
    for _ in range(epochs):
        perm = torch.randperm(len(xt), generator=g)
        for i in range(0, len(xt), batch):
            idx = perm[i:i + batch]
            opt.zero_grad()
            loss = torch.nn.functional.l1_loss(net(xt[idx]), yt[idx])
            loss.backward()
            opt.step()
        sched.step()
    return net


class Ensemble(torch.nn.Module):
    """The mean ln latency of independently initialised members (a geometric mean of their
    latencies): exported to ONNX as one graph."""

    def __init__(self, nets):
        super().__init__()
        self.nets = torch.nn.ModuleList(nets)

    def forward(self, x):
        return torch.stack([n(x) for n in self.nets]).mean(0)


def train_members(x, y, epochs, seed, anchored, members=1, **kw):
    """`members` networks from seeds seed, seed + 1000, ...; one network when members is 1."""
    nets = [train(x, y, epochs, seed + 1000 * i, anchored, **kw) for i in range(members)]
    return nets[0] if members == 1 else Ensemble(nets)


def predict(net, x):
    with torch.no_grad():
        return np.exp(net(torch.from_numpy(x)).numpy().astype(np.float64))


def mape(pred, true):
    return float(np.mean(np.abs(pred - true) / true))


def analytic(train_rows, test_rows):
    """latency = c_m · b / (s · q), ln c_m the mean residual of the model's training rows."""
    c = {}
    for m, b, s, q, lat in train_rows:
        c.setdefault(m, []).append(math.log(lat) - math.log(b / (s * q)))
    c = {m: sum(v) / len(v) for m, v in c.items()}
    return np.asarray([math.exp(c[m]) * b / (s * q) for m, b, s, q, _ in test_rows])


def folds(models, k, seed):
    rng = np.random.default_rng(seed)
    order = list(models)
    rng.shuffle(order)
    return [order[i::k] for i in range(k)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--out")
    ap.add_argument("--epochs", type=int, default=40)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--members", type=int, default=3, help="networks averaged (in ln) per prediction")
    ap.add_argument("--onnx-features", help="JSON {model: vector} from bench/rapp/onnx-vectors.ts: adds the variant 'onnx'")
    a = ap.parse_args()
    torch.set_num_threads(max(1, min(2, os.cpu_count() or 1)))
    t0 = time.time()
    graphs, rows = load(a.data)
    vecs = model_vectors(graphs)
    variants = [("ours", True, vecs), ("static", False, vecs)]
    if a.onnx_features:
        # what the platform itself has: the features of the model's own ONNX file and the batch-1
        # latencies its deploy-time profile measures (RaPP's 5 runtime graph features), not RaPP's
        # per-operator runtime shares (they need per-operator GPU profiling)
        ov = json.load(open(a.onnx_features))
        missing = sorted(set(graphs) - set(ov))
        if missing:
            sys.exit(f"--onnx-features lacks {missing}")
        onnx_vecs = {m: (np.asarray(ov[m], dtype=np.float64), np.log1p(np.abs(np.asarray(graphs[m]["graph_features"], dtype=np.float64)[RUNTIME_GRAPH]))) for m in graphs}
        variants.append(("onnx", True, onnx_vecs))
    true = np.asarray([r[4] for r in rows])
    res = {"models": len(graphs), "rows": len(rows), "seed": a.seed, "epochs": a.epochs, "members": a.members}

    # leave models out
    per = {k: [] for k, _, _ in variants}
    per["analytic"] = []
    lomo = np.full(len(rows), np.nan)
    for fold in folds(sorted(graphs), a.folds, a.seed):
        held = set(fold)
        tr = [i for i, r in enumerate(rows) if r[0] not in held]
        te = [i for i, r in enumerate(rows) if r[0] in held]
        for key, rt, vv in variants:
            x = features(rows, vv, graphs, rt)
            net = train_members(x[tr], true[tr], a.epochs, a.seed, rt, a.members)
            per[key].append((predict(net, x[te]), true[te]))
            if key == "ours":
                lomo[te] = per[key][-1][0]
        # analytic on an unseen model: c_m from K profiled points (quota 1, SM 100 %, batches 1..)
        rng = np.random.default_rng(a.seed)
        prof = []
        for m in fold:
            mine = [r for r in rows if r[0] == m]
            pick = rng.choice(len(mine), size=min(K_PROFILED, len(mine)), replace=False)
            prof += [mine[i] for i in pick]
        per["analytic"].append((analytic(prof, [rows[i] for i in te]), true[te]))
        print(f"fold {len(per['ours'])}: {sorted(fold)} ({time.time() - t0:.0f} s)", file=sys.stderr)
    cat = lambda k: (np.concatenate([p for p, _ in per[k]]), np.concatenate([t for _, t in per[k]]))
    res["unseen_models"] = {k: mape(*cat(k)) for k in per}
    per_model = {}
    for i, r in enumerate(rows):
        per_model.setdefault(r[0], []).append(abs(lomo[i] - r[4]) / r[4])
    res["unseen_models_per_model"] = {m: float(np.mean(v)) for m, v in sorted(per_model.items())}
    if a.out:
        # every row predicted by the fold model that never saw its model: the simulator's predicted profiles
        os.makedirs(a.out, exist_ok=True)
        with open(os.path.join(a.out, "lomo.csv"), "w") as f:
            f.write("model,batch,sm_pct,quota_pct,latency_ms\n")
            for i, (m, b, sm, q, _) in enumerate(rows):
                f.write(f"{m},{b},{round(sm * 100)},{round(q * 100)},{lomo[i]:.4f}\n")

    # unseen configurations of seen models
    rng = np.random.default_rng(a.seed)
    test = rng.random(len(rows)) < 0.2
    tr = np.where(~test)[0]
    te = np.where(test)[0]
    cfg = {}
    for key, rt, vv in variants:
        x = features(rows, vv, graphs, rt)
        net = train_members(x[tr], true[tr], a.epochs, a.seed, rt, a.members)
        cfg[key] = mape(predict(net, x[te]), true[te])
        if key == "ours" and a.out:
            final = train_members(x, true, a.epochs, a.seed, True, a.members)
            os.makedirs(a.out, exist_ok=True)
            torch.onnx.export(final, torch.from_numpy(x[:2]), os.path.join(a.out, "rapp-v100.onnx"), input_names=["x"], output_names=["ln_latency_ms"], dynamic_axes={"x": {0: "n"}, "ln_latency_ms": {0: "n"}}, opset_version=13)
            sample = rng.choice(len(rows), size=256, replace=False)
            json.dump({"rows": [list(rows[i][:4]) for i in sample], "x": x[sample].tolist(), "y": predict(final, x[sample]).tolist(), "features": int(x.shape[1])}, open(os.path.join(a.out, "sample.json"), "w"))
    cfg["analytic"] = mape(analytic([rows[i] for i in tr], [rows[i] for i in te]), true[te])
    res["unseen_configs"] = cfg
    res["seconds"] = round(time.time() - t0, 1)
    print(json.dumps(res))


if __name__ == "__main__":
    main()
