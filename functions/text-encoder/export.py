#!/usr/bin/python3
"""Build functions/text-encoder: a tiny transformer encoder sentiment classifier (issue 25).

Run with Debian's torch (no downloads):  /usr/bin/python3 functions/text-encoder/export.py
Writes, beside this script: vocab.json, labels.json, model.onnx (int64 inputs input_ids,
attention_mask, token_type_ids, all [batch, seq]; outputs logits and probabilities [batch, 3])
and metrics.json (held-out accuracy, parameters, timings).

The task is synthetic so that the answers mean something: short review-like sentences of filler
words, sentiment words and negations ("not good" is negative); the label is the sign of the
summed sentiment after negation (negative / neutral / positive). Seeds are fixed: reruns give
the same vocabulary and data; the weights match up to torch's CPU kernels.
"""
import json
import os
import random
import sys
import time

import torch
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))
MAX_LEN = 64
SPECIAL = ['[PAD]', '[UNK]', '[CLS]', '[SEP]']
POSITIVE = ['good', 'great', 'excellent', 'love', 'loved', 'wonderful', 'happy', 'fantastic', 'nice', 'best', 'enjoyed', 'brilliant']
NEGATIVE = ['bad', 'terrible', 'awful', 'hate', 'hated', 'boring', 'poor', 'worst', 'sad', 'horrible', 'disappointing', 'dull']
NEGATIONS = ['not', 'never', "isn't", "wasn't", "don't", "didn't"]
FILLER = ['the', 'a', 'this', 'that', 'movie', 'film', 'book', 'food', 'service', 'plot', 'acting', 'story', 'was', 'is', 'it',
          'i', 'we', 'they', 'really', 'very', 'quite', 'and', 'but', 'so', 'too', 'at', 'all', 'place', 'show', 'music']
LABELS = ['negative', 'neutral', 'positive']


def vocabulary():
    words = SPECIAL + sorted(set(POSITIVE + NEGATIVE + NEGATIONS + FILLER))
    return {w: i for i, w in enumerate(words)}


def sentence(rng):
    """A list of words and its label index."""
    words, score = [], 0
    for _ in range(rng.randint(0, 3)):
        words += rng.sample(FILLER, rng.randint(1, 4))
        kind = rng.random()
        if kind < 0.8:
            neg = rng.random() < 0.3
            pos = rng.random() < 0.5
            if neg:
                words.append(rng.choice(NEGATIONS))
            words.append(rng.choice(POSITIVE if pos else NEGATIVE))
            score += (1 if pos else -1) * (-1 if neg else 1)
    words += rng.sample(FILLER, rng.randint(0, 3))
    if not words:
        words = [rng.choice(FILLER)]
    label = 2 if score > 0 else 0 if score < 0 else 1
    return words, label


def encode(words, vocab):
    ids = [vocab['[CLS]']] + [vocab.get(w, vocab['[UNK]']) for w in words]
    return ids[:MAX_LEN]


class Encoder(nn.Module):
    def __init__(self, vocab_size, d=48, heads=4, layers=2, classes=3):
        super().__init__()
        self.vocab_size = vocab_size
        self.tok = nn.Embedding(vocab_size, d)
        self.pos = nn.Embedding(MAX_LEN, d)
        self.seg = nn.Embedding(2, d)
        layer = nn.TransformerEncoderLayer(d, heads, dim_feedforward=2 * d, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Linear(d, classes)

    def forward(self, input_ids, attention_mask, token_type_ids):
        # out-of-range ids and positions past MAX_LEN are clamped, so no input values make the graph fail
        ids = input_ids.clamp(0, self.vocab_size - 1)
        seq = input_ids.shape[1]
        pos = torch.arange(seq, device=input_ids.device).clamp(max=MAX_LEN - 1).unsqueeze(0)
        x = self.tok(ids) + self.pos(pos) + self.seg(token_type_ids.clamp(0, 1))
        keep = attention_mask > 0
        # additive float mask [batch*heads, seq, seq] instead of key_padding_mask: exports to plain ops
        bias = (~keep).float() * -1e4
        bias = bias[:, None, None, :].expand(-1, self.encoder.layers[0].self_attn.num_heads, seq, -1).reshape(-1, seq, seq)
        h = self.encoder(x, mask=bias)
        w = keep.float().unsqueeze(-1)
        pooled = (h * w).sum(1) / w.sum(1).clamp(min=1.0)
        return self.head(pooled)


class Exported(nn.Module):
    def __init__(self, enc):
        super().__init__()
        self.enc = enc

    def forward(self, input_ids, attention_mask, token_type_ids):
        logits = self.enc(input_ids, attention_mask, token_type_ids)
        return logits, torch.softmax(logits, dim=-1)


def batch_of(rows, vocab):
    seq = max(len(r) for r in rows)
    ids = torch.zeros(len(rows), seq, dtype=torch.long)
    mask = torch.zeros(len(rows), seq, dtype=torch.long)
    for i, r in enumerate(rows):
        ids[i, :len(r)] = torch.tensor(r)
        mask[i, :len(r)] = 1
    return ids, mask, torch.zeros_like(ids)


def main():
    torch.manual_seed(25)
    torch.set_num_threads(1)
    rng = random.Random(25)
    vocab = vocabulary()
    train = [sentence(rng) for _ in range(6000)]
    test = [sentence(rng) for _ in range(1000)]
    model = Encoder(len(vocab))
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    loss_fn = nn.CrossEntropyLoss()
    started = time.time()
    steps = int(os.environ.get('STEPS', '900'))
    for step in range(steps):
        rows = rng.sample(train, 64)
        ids, mask, seg = batch_of([encode(w, vocab) for w, _ in rows], vocab)
        loss = loss_fn(model(ids, mask, seg), torch.tensor([y for _, y in rows]))
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 100 == 0:
            print(f'step {step} loss {loss.item():.3f}', file=sys.stderr)
    train_s = time.time() - started
    model.eval()
    with torch.no_grad():
        ids, mask, seg = batch_of([encode(w, vocab) for w, _ in test], vocab)
        pred = model(ids, mask, seg).argmax(-1)
        acc = (pred == torch.tensor([y for _, y in test])).float().mean().item()
    print(f'held-out accuracy {acc:.3f} after {steps} steps ({train_s:.1f} s)', file=sys.stderr)

    wrapped = Exported(model).eval()
    ids, mask, seg = batch_of([encode('the movie was not good'.split(), vocab), encode(['great'], vocab)], vocab)
    dyn = {n: {0: 'batch', 1: 'seq'} for n in ['input_ids', 'attention_mask', 'token_type_ids']}
    dyn.update({'logits': {0: 'batch'}, 'probabilities': {0: 'batch'}})
    torch.onnx.export(wrapped, (ids, mask, seg), os.path.join(HERE, 'model.onnx'), opset_version=14,
                      input_names=['input_ids', 'attention_mask', 'token_type_ids'], output_names=['logits', 'probabilities'],
                      dynamic_axes=dyn, do_constant_folding=True)
    with open(os.path.join(HERE, 'vocab.json'), 'w') as f:
        json.dump(vocab, f, indent=0)
        f.write('\n')
    with open(os.path.join(HERE, 'labels.json'), 'w') as f:
        json.dump(LABELS, f)
        f.write('\n')
    with torch.no_grad():
        example = wrapped(ids, mask, seg)[1].tolist()
    metrics = {
        'heldOutAccuracy': round(acc, 4), 'trainSteps': steps, 'trainSeconds': round(train_s, 1), 'heldOut': len(test),
        'parameters': sum(p.numel() for p in model.parameters()), 'torch': torch.__version__, 'opset': 14,
        'example': {'texts': ['the movie was not good', 'great'], 'probabilities': [[round(p, 4) for p in r] for r in example]},
    }
    with open(os.path.join(HERE, 'metrics.json'), 'w') as f:
        json.dump(metrics, f, indent=2)
        f.write('\n')
    print(json.dumps(metrics), file=sys.stderr)


if __name__ == '__main__':
    main()
