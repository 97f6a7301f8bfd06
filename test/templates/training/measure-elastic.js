#!/usr/bin/env node
// @ts-check
'use strict';
/**
 * Measure the ml-training harness on digits-train: examples/s by worker count and global batch
 * (median over epochs after the first two, whose JIT warm-up is excluded), and SIGTERM → exit time
 * with n workers. Lays out the image like the tests do; prints one JSON line per measurement.
 *   node test/templates/training/measure-elastic.js [--epochs 12] [--workers 1,2,4] [--batches 32,128] [--model mlp] [--stops 5]
 */
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const root = path.resolve(__dirname, '../../..');
const arg = (/** @type {string} */ name, /** @type {string} */ dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const epochs = Number(arg('epochs', '12'));
const workerCounts = arg('workers', '1,2,4').split(',').map(Number);
const batches = arg('batches', '32,128').split(',').map(Number);
const stops = Number(arg('stops', '5'));
const model = arg('model', 'mlp');

function layout() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mlfaas-measure-'));
  const t = path.join(root, 'templates/ml-training');
  for (const f of fs.readdirSync(t)) if (f !== 'function') fs.cpSync(path.join(t, f), path.join(dir, f), { recursive: true });
  fs.cpSync(path.join(root, 'functions/digits-train'), path.join(dir, 'function'), { recursive: true });
  return dir;
}

/** @param {string} dir @param {Record<string, string>} env @param {(line: any, child: import('node:child_process').ChildProcess) => void} [onLine] */
function job(dir, env, onLine) {
  const ckpt = fs.mkdtempSync(path.join(os.tmpdir(), 'mlfaas-measure-ckpt-'));
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['index.js'], { cwd: dir, env: { PATH: process.env.PATH, CHECKPOINT_DIR: ckpt, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
    /** @type {any[]} */
    const lines = [];
    let buf = '';
    child.stdout.on('data', (c) => {
      buf += c;
      const parts = buf.split('\n');
      buf = parts.pop() || '';
      for (const p of parts) {
        const doc = JSON.parse(p);
        lines.push(doc);
        if (onLine) onLine(doc, child);
      }
    });
    child.on('exit', (code) => {
      fs.rmSync(ckpt, { recursive: true, force: true });
      resolve({ code, lines });
    });
  });
}

const median = (/** @type {number[]} */ xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor(s.length / 2)] : NaN;
};

async function main() {
  const dir = layout();
  console.log(JSON.stringify({ cpus: os.cpus().length, loadavg: os.loadavg().map((x) => Math.round(x * 100) / 100), node: process.version }));
  for (const batch of batches) {
    for (const w of workerCounts) {
      const t0 = Date.now();
      /** @type {any} */
      const r = await job(dir, { WORKERS: String(w), BATCH_SIZE: String(batch), EPOCHS: String(epochs), LEARNING_RATE: '0.1', CHECKPOINT_EVERY: '1000', MODEL: model });
      const progress = r.lines.filter((/** @type {any} */ l) => l.type === 'progress');
      const eps = progress.slice(2).map((/** @type {any} */ p) => p.examplesPerSec);
      const done = r.lines.find((/** @type {any} */ l) => l.type === 'done');
      console.log(JSON.stringify({
        measure: 'throughput', model, workers: w, globalBatch: batch, epochs, exitCode: r.code, wallMs: Date.now() - t0,
        examplesPerSecMedian: median(eps), examplesPerSecMax: Math.max(...eps), accuracy: done && done.accuracy,
        gradNoiseScaleLast: progress.at(-1).gradNoiseScale,
      }));
    }
  }
  for (const w of [4]) {
    const ms = [];
    for (let i = 0; i < stops; i++) {
      /** @type {number} */
      let sent = 0;
      /** @type {any} */
      const r = await job(dir, { WORKERS: String(w), BATCH_SIZE: '64', EPOCHS: '100000', CHECKPOINT_EVERY: '1000', MODEL: model }, (doc, child) => {
        if (!sent && doc.type === 'progress' && doc.epoch === 3) {
          sent = Date.now();
          child.kill('SIGTERM');
        }
      });
      ms.push(Date.now() - sent);
      if (r.code !== 0) throw new Error(`exit ${r.code}`);
    }
    console.log(JSON.stringify({ measure: 'sigterm-to-exit', model, workers: w, trials: stops, ms, medianMs: median(ms), maxMs: Math.max(...ms) }));
  }
  fs.rmSync(dir, { recursive: true, force: true });
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
