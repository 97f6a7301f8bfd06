#!/usr/bin/python3
"""Train the digits-classify model and write everything the function folder needs.

Run from the repository root with Debian's Python (it has torch, scikit-learn and onnx):

    /usr/bin/python3 functions/digits-classify/train.py

Writes, deterministically (seed 0):
  functions/digits-classify/data/digits.csv   the full dataset, 64 pixel columns (0-16) + label
  functions/digits-train/data/digits.csv      the same bytes, for the training example
  functions/digits-classify/model.onnx        MLP 64-64-10, input [batch, 64] raw pixels, output
                                              [batch, 10] class probabilities (softmax in-graph)
  functions/digits-classify/labels.json       class names "0".."9"
  functions/digits-classify/digit.json        one held-out test example in the runtime's format
  functions/digits-classify/metrics.json      measured held-out accuracy and the split used
  functions/digits-classify/data/split.json   the held-out rows, so other code can re-measure
"""
import json
import os
import random
import sys

import numpy as np
import torch
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

SEED = 0
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
TEST_FRACTION = 0.2
EPOCHS = 60
BATCH = 32
LR = 1e-3
DIGIT_JSON_INDEX = 0  # which held-out example goes into digit.json


class DigitsMLP(torch.nn.Module):
    """Raw 0-16 pixel intensities in, class probabilities out. Scaling lives in the graph."""

    def __init__(self, hidden=64):
        super().__init__()
        self.fc1 = torch.nn.Linear(64, hidden)
        self.fc2 = torch.nn.Linear(hidden, 10)

    def logits(self, x):
        x = x / 16.0
        return self.fc2(torch.relu(self.fc1(x)))

    def forward(self, x):
        return torch.softmax(self.logits(x), dim=1)


def write_csv(path, x, y):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", newline="\n") as f:
        f.write(",".join([f"p{i}" for i in range(64)] + ["label"]) + "\n")
        for row, label in zip(x, y):
            f.write(",".join(str(int(v)) for v in row) + f",{int(label)}\n")


def main():
    random.seed(SEED)
    np.random.seed(SEED)
    torch.manual_seed(SEED)
    torch.set_num_threads(1)

    digits = load_digits()
    x, y = digits.data.astype(np.float32), digits.target.astype(np.int64)
    for path in (os.path.join(HERE, "data", "digits.csv"),
                 os.path.join(ROOT, "functions", "digits-train", "data", "digits.csv")):
        write_csv(path, x, y)

    idx = np.arange(len(y))
    train_idx, test_idx = train_test_split(idx, test_size=TEST_FRACTION, random_state=SEED, stratify=y)
    xtr, ytr = torch.from_numpy(x[train_idx]), torch.from_numpy(y[train_idx])
    xte, yte = torch.from_numpy(x[test_idx]), torch.from_numpy(y[test_idx])

    model = DigitsMLP()
    opt = torch.optim.Adam(model.parameters(), lr=LR)
    gen = torch.Generator().manual_seed(SEED)
    for epoch in range(EPOCHS):
        model.train()
        perm = torch.randperm(len(ytr), generator=gen)
        total = 0.0
        for i in range(0, len(perm), BATCH):
            b = perm[i:i + BATCH]
            loss = torch.nn.functional.cross_entropy(model.logits(xtr[b]), ytr[b])
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item() * len(b)
        if epoch % 10 == 9 or epoch == EPOCHS - 1:
            print(f"epoch {epoch + 1:3d} train loss {total / len(ytr):.4f}", file=sys.stderr)

    model.eval()
    with torch.no_grad():
        pred = model(xte).argmax(dim=1)
        accuracy = (pred == yte).float().mean().item()
        train_acc = (model(xtr).argmax(dim=1) == ytr).float().mean().item()
    print(f"held-out test accuracy {accuracy:.4f} ({int((pred == yte).sum())}/{len(yte)}), "
          f"train accuracy {train_acc:.4f}")

    onnx_path = os.path.join(HERE, "model.onnx")
    torch.onnx.export(
        model, torch.zeros(1, 64), onnx_path,
        input_names=["pixels"], output_names=["probabilities"],
        dynamic_axes={"pixels": {0: "batch"}, "probabilities": {0: "batch"}},
        opset_version=13, do_constant_folding=True,
    )

    with open(os.path.join(HERE, "labels.json"), "w") as f:
        json.dump([str(d) for d in range(10)], f)
        f.write("\n")

    example = int(test_idx[DIGIT_JSON_INDEX])
    with open(os.path.join(HERE, "digit.json"), "w") as f:
        json.dump({"instances": [[int(v) for v in x[example]]]}, f)
        f.write("\n")

    metrics = {
        "seed": SEED, "testFraction": TEST_FRACTION, "epochs": EPOCHS, "batchSize": BATCH, "lr": LR,
        "trainSize": int(len(train_idx)), "testSize": int(len(test_idx)),
        "testAccuracy": round(accuracy, 4), "trainAccuracy": round(train_acc, 4),
        "digitJson": {"datasetRow": example, "label": int(y[example]),
                      "predicted": int(model(torch.from_numpy(x[example:example + 1])).argmax())},
        "torch": torch.__version__,
    }
    with open(os.path.join(HERE, "data", "split.json"), "w") as f:
        json.dump({"seed": SEED, "testFraction": TEST_FRACTION,
                   "note": "0-based data rows of digits.csv (header excluded) held out from training",
                   "testRows": sorted(int(i) for i in test_idx)}, f)
        f.write("\n")
    with open(os.path.join(HERE, "metrics.json"), "w") as f:
        json.dump(metrics, f, indent=2)
        f.write("\n")
    print(json.dumps(metrics["digitJson"]))


if __name__ == "__main__":
    main()
