#!/usr/bin/python3
"""The latency predictor on the platform's own CPU measurements (issue 12): cross-validation.

Data: bench/rapp/data/cpu-corpus.csv (model, cores, quota, batch, latency_ms, throughput: the
capability profiler's end-to-end points, measured by bench/rapp/measure-cpu.ts) and
cpu-corpus.features.json (each model's vector from its own ONNX file,
autoscaler/rapp/onnx-features.ts). Configuration: batch, cores (the spatial share, 1 or 2 of
this node's), quota q.

Models (the feature variant of each network is chosen per split by an inner cross-validation on
the training models, `choose`; nothing else was tuned):
- ours: ONNX features + configuration + ONE profiled point per model (batch 1, one core, quota 1:
  the first point a deploy-time profile measures). The network predicts ln latency relative to
  that point scaled analytically (ln(l1 · b / (cores · q))), i.e. it learns how far batching,
  a second core and a quota depart from linear for a graph like this one.
- static: the same network without the profiled point (DIPPM-like: the graph alone).
- analytic: l1 · b / (cores · q) from the same profiled point (for unseen configurations of seen
  models: c_m fitted on the model's training rows).
The profiled point itself is never a test row.

Splits (seeded): leave-models-out, 5 folds over the models; unseen configurations, 20 % of each
model's other rows held out. MAPE = mean |pred - true| / true.

Usage: /usr/bin/python3 bench/rapp/cpu_cv.py [--data PREFIX] [--epochs N] [--seeds 1,2,3]
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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from v100_cv import analytic as v100_analytic, folds, mape, predict, train_members  # noqa: E402

WIDTH = 64
WEIGHT_DECAY = 1e-3
BATCH = 64


MEMBERS = 3


def read_run(path):
    out = {}
    with open(path) as f:
        next(f)
        for line in f:
            m, c, q, b, lat, _ = line.strip().split(",")
            out[(m, int(c), float(q), int(b))] = float(lat)
    return out


def load(prefix):
    """Rows labelled with the mean latency of every measurement run of the point: PREFIX.csv and,
    where present, PREFIX-2.csv (a second run of the same command); also the retest error, the
    MAPE of run 2 against run 1 on the points both have (what one measurement misses another by)."""
    feats = json.load(open(prefix + ".features.json"))
    runs = [read_run(prefix + ".csv")] + ([read_run(prefix + "-2.csv")] if os.path.exists(prefix + "-2.csv") else [])
    rows = []
    for k, lat in runs[0].items():
        both = [r[k] for r in runs if k in r]
        rows.append(k + (sum(both) / len(both),))
    retest = None
    if len(runs) > 1:
        common = [k for k in runs[0] if k in runs[1]]
        retest = {"points": len(common), "mape": float(np.mean([abs(runs[1][k] - runs[0][k]) / runs[0][k] for k in common]))}
        per = {}
        for k in common:
            per.setdefault(k[0], []).append(abs(runs[1][k] - runs[0][k]) / runs[0][k])
        retest["per_model"] = {m: float(np.mean(v)) for m, v in sorted(per.items())}
    return feats, rows, retest


def is_profiled(r):
    return r[1] == 1 and r[2] == 1 and r[3] == 1


# Which of the graph's features the network sees, chosen per split by an inner cross-validation on
# the training models only (never on the rows reported): none (a learned function of the
# configuration alone), the graph-level ones (nodes, parameters, FLOPs, activation bytes, depth,
# FLOPs per parameter, shapes known: the first and last six entries of `featureVector`), or all
# (with the operator mix).
VARIANTS = {
    "config": lambda v: [],
    "graph": lambda v: [v[0]] + list(v[-6:]),
    "all": lambda v: list(v),
}


def features(rows, feats, anchors, runtime, variant="all"):
    x = []
    pick = VARIANTS[variant]
    for m, c, q, b, _ in rows:
        cfg = [b, c, q, math.log(b), math.log(c), math.log(q)]
        st = np.asarray(pick(feats[m]), dtype=np.float64)
        if runtime:
            x.append(np.concatenate([st, cfg, [math.log(anchors[m]), math.log(anchors[m] * b / (c * q))]]))
        else:
            x.append(np.concatenate([st, cfg]))
    return np.asarray(x, dtype=np.float32)


def analytic(anchors, rows):
    return np.asarray([anchors[m] * b / (c * q) for m, c, q, b, _ in rows])


def fitted_analytic(train_rows, test_rows):
    """v100_cv's analytic baseline (c_m · b / (share · quota) fitted per model), cores as the share."""
    as_v100 = lambda rows: [(m, b, c, q, lat) for m, c, q, b, lat in rows]
    return v100_analytic(as_v100(train_rows), as_v100(test_rows))


def fit(x, y, epochs, seed, anchored):
    return train_members(x, y, epochs, seed, anchored, MEMBERS, width=WIDTH, weight_decay=WEIGHT_DECAY, batch=BATCH)


def choose(feats, rows, anchors, true, idx, runtime, epochs, seed, by_model):
    """The variant with the lowest MAPE in an inner split of the rows `idx` (the outer training
    rows): 4 folds over their models, or (by_model False) 20 % of them held out."""
    sub = [rows[i] for i in idx]
    if by_model:
        inner = [([j for j, r in enumerate(sub) if r[0] not in set(f)], [j for j, r in enumerate(sub) if r[0] in set(f) and not is_profiled(r)])
                 for f in folds(sorted({r[0] for r in sub}), 4, seed + 100)]
    else:
        held = (np.random.default_rng(seed + 100).random(len(sub)) < 0.2) & ~np.asarray([is_profiled(r) for r in sub])
        inner = [(list(np.where(~held)[0]), list(np.where(held)[0]))]
    t = true[idx]
    score = {}
    for v in VARIANTS:
        x = features(sub, feats, anchors, runtime, v)
        p, y = [], []
        for tr, te in inner:
            p.append(predict(fit(x[tr], t[tr], epochs, seed, runtime), x[te]))
            y.append(t[te])
        score[v] = mape(np.concatenate(p), np.concatenate(y))
    return min(score, key=score.get), score


def run(feats, rows, epochs, seed, nfolds):
    models = sorted({r[0] for r in rows})
    anchors = {r[0]: r[4] for r in rows if is_profiled(r)}
    models = [m for m in models if m in anchors and m in feats]
    rows = [r for r in rows if r[0] in anchors and r[0] in feats]
    true = np.asarray([r[4] for r in rows])
    out = {"unseen_models": {}, "unseen_configs": {}, "chosen": {"unseen_models": {"ours": [], "static": []}, "unseen_configs": {}}}

    # leave models out; the profiled point is the model's only measurement the predictor sees
    pred = {k: np.full(len(rows), np.nan) for k in ["ours", "static", "analytic"]}
    for fold in folds(models, nfolds, seed):
        held = set(fold)
        tr = [i for i, r in enumerate(rows) if r[0] not in held]
        te = [i for i, r in enumerate(rows) if r[0] in held and not is_profiled(r)]
        for key in ["ours", "static"]:
            v, _ = choose(feats, rows, anchors, true, tr, key == "ours", epochs, seed, True)
            out["chosen"]["unseen_models"][key].append(v)
            x = features(rows, feats, anchors, key == "ours", v)
            pred[key][te] = predict(fit(x[tr], true[tr], epochs, seed, key == "ours"), x[te])
        pred["analytic"][te] = analytic(anchors, [rows[i] for i in te])
    te = [i for i, r in enumerate(rows) if not is_profiled(r)]
    out["unseen_models"] = {k: mape(v[te], true[te]) for k, v in pred.items()}
    per = {}
    for i in te:
        per.setdefault(rows[i][0], []).append(abs(pred["ours"][i] - true[i]) / true[i])
    out["unseen_models_per_model"] = {m: float(np.mean(v)) for m, v in sorted(per.items())}

    # unseen configurations of seen models (the profiled point always known)
    rng = np.random.default_rng(seed)
    test = (rng.random(len(rows)) < 0.2) & ~np.asarray([is_profiled(r) for r in rows])
    tr = list(np.where(~test)[0])
    te = np.where(test)[0]
    for key in ["ours", "static"]:
        v, _ = choose(feats, rows, anchors, true, tr, key == "ours", epochs, seed, False)
        out["chosen"]["unseen_configs"][key] = v
        x = features(rows, feats, anchors, key == "ours", v)
        out["unseen_configs"][key] = mape(predict(fit(x[tr], true[tr], epochs, seed, key == "ours"), x[te]), true[te])
    out["unseen_configs"]["analytic"] = mape(fitted_analytic([rows[i] for i in tr], [rows[i] for i in te]), true[te])
    out["models"] = len(models)
    out["rows"] = len(rows)
    return out


def main():
    global MEMBERS
    ap = argparse.ArgumentParser()
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--data", default=os.path.join(here, "data", "cpu-corpus"))
    ap.add_argument("--epochs", type=int, default=300)
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--members", type=int, default=MEMBERS, help="networks averaged (in ln) per prediction")
    ap.add_argument("--export", help="only train both networks on every row and write cpu-latency.onnx, cpu-latency-static.onnx and cpu-latency.json here")
    a = ap.parse_args()
    torch.set_num_threads(1)
    MEMBERS = a.members
    t0 = time.time()
    feats, rows, retest = load(a.data)
    seeds = [int(s) for s in a.seeds.split(",")]
    if a.export:
        export(feats, rows, a.epochs, seeds[0], a.export)
        print(json.dumps({"exported": a.export, "seconds": round(time.time() - t0, 1)}))
        return
    runs = [run(feats, rows, a.epochs, s, a.folds) for s in seeds]
    res = {"seeds": seeds, "epochs": a.epochs, "models": runs[0]["models"], "rows": runs[0]["rows"], "profiled_points_per_model": 1,
           "points_per_model": len(rows) // max(1, runs[0]["models"])}
    for split in ["unseen_models", "unseen_configs"]:
        res[split] = {k: float(np.mean([r[split][k] for r in runs])) for k in runs[0][split]}
        res[split + "_by_seed"] = {k: [r[split][k] for r in runs] for k in runs[0][split]}
    res["unseen_models_per_model"] = runs[0]["unseen_models_per_model"]
    res["members"] = MEMBERS
    res["retest"] = retest
    res["chosen"] = [r["chosen"] for r in runs]
    res["seconds"] = round(time.time() - t0, 1)
    print(json.dumps(res))


def export(feats, rows, epochs, seed, out):
    """The platform's CPU predictors, trained on every measured row (our own data: they ship in
    the repository) with the variant a cross-validation over the models picks; cpu-latency.json
    names the variants (the TypeScript feature rows follow it) and holds Python's predictions on
    64 sampled rows for the parity test."""
    anchors = {r[0]: r[4] for r in rows if is_profiled(r)}
    rows = [r for r in rows if r[0] in anchors and r[0] in feats]
    true = np.asarray([r[4] for r in rows])
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(seed)
    sample = rng.choice(len(rows), size=min(64, len(rows)), replace=False)
    doc = {"rows": [list(rows[i][:4]) + [anchors[rows[i][0]]] for i in sample], "vectors": {m: feats[m] for m in sorted({rows[i][0] for i in sample})},
           "variants": {}, "scores": {}, "predictions": {}, "epochs": epochs, "seed": seed, "members": MEMBERS}
    for name, runtime in [("cpu-latency", True), ("cpu-latency-static", False)]:
        v, score = choose(feats, rows, anchors, true, list(range(len(rows))), runtime, epochs, seed, True)
        x = features(rows, feats, anchors, runtime, v)
        net = fit(x, true, epochs, seed, runtime)
        net.eval()
        torch.onnx.export(net, torch.from_numpy(x[:2]), os.path.join(out, name + ".onnx"), input_names=["x"], output_names=["ln_latency_ms"],
                          dynamic_axes={"x": {0: "n"}, "ln_latency_ms": {0: "n"}}, opset_version=13)
        doc["variants"][name] = v
        doc["scores"][name] = score
        doc["predictions"][name] = predict(net, x[sample]).tolist()
    json.dump(doc, open(os.path.join(out, "cpu-latency.json"), "w"))


if __name__ == "__main__":
    main()
