// @ts-check
'use strict';
/**
 * mlfaas ml-training harness: trains the model that function/train.js defines, data-parallel over
 * WORKERS worker threads, with hyper-parameters from the environment, JSON-line progress on
 * stdout, checkpoints in CHECKPOINT_DIR (resumed on start, with any worker count), and
 * checkpoint-then-exit-0 on SIGTERM. See README.md.
 */
const fs = require('node:fs');
const path = require('node:path');
const nn = require('./nn');
const { parseConfig } = require('./config');
const { saveCheckpoint, loadLatestCheckpoint, positionOf } = require('./checkpoint');
const { Trainer, splitDataset, emptyPartial, localBatchOf } = require('./trainer');
const { DataParallel } = require('./parallel');

/** @param {Record<string, unknown>} doc */
const emit = (doc) => process.stdout.write(`${JSON.stringify(doc)}\n`);
/** @param {string} line */
const log = (line) => process.stderr.write(`[ml-training] ${line}\n`);

async function main() {
  /** @type {Trainer | null} */
  let trainer = null;
  /** @type {DataParallel | null} */
  let engine = null;
  /** @type {string | null} */
  let stopReason = null;
  /** @type {NodeJS.Timeout | null} */
  let grace = null;
  /** @param {string} why */
  const stop = (why) => {
    if (stopReason) return;
    stopReason = why;
    if (trainer) trainer.requestStop();
    else if (engine) engine.requestStop();
    const ms = config ? config.checkpointGraceMs : 5000;
    grace = setTimeout(() => {
      log(`${why}: no checkpoint within ${ms} ms (CHECKPOINT_GRACE_MS); exiting without one`);
      process.exit(1);
    }, ms);
  };
  /** @type {import('./config').TrainConfig | null} */
  let config = null;
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));

  const handlerFile = path.resolve(process.cwd(), process.env.FUNCTION_DIR || 'function', 'train.js');
  if (!fs.existsSync(handlerFile)) throw new Error(`${handlerFile} is missing; see README.md for what it exports`);
  /** @type {any} */
  const handler = require(handlerFile);
  for (const k of ['loadDataset', 'createModel']) {
    if (typeof handler[k] !== 'function') throw new Error(`${handlerFile} does not export ${k}()`);
  }
  config = parseConfig(process.env, handler.defaults || {}, process.cwd());
  const cfg = config;
  if (cfg.watchParent) watchParent(() => stop('parent process exited'));

  const data = await handler.loadDataset(cfg.dataset, { nn, seed: cfg.seed });
  const split = splitDataset(data, cfg.testFraction, cfg.seed);
  /** @type {nn.Model} */
  const model = await handler.createModel(cfg.model, { nn, inputSize: data.inputSize, numClasses: data.numClasses, seed: cfg.seed });

  /** @type {import('./checkpoint').Position} */
  let pos = { step: 0, epoch: 0, offset: 0, samples: 0, partial: emptyPartial(), model: cfg.model, seed: cfg.seed, reason: 'start' };
  const resumed = loadLatestCheckpoint(cfg.checkpointDir);
  if (resumed) {
    const c = resumed.checkpoint;
    if (c.model !== cfg.model || c.paramCount !== model.params.length) {
      throw new Error(`${resumed.file} holds model '${c.model}' with ${c.paramCount} parameters; ` +
        `this job trains '${cfg.model}' with ${model.params.length}. Use another CHECKPOINT_DIR.`);
    }
    model.params.set(resumed.params);
    pos = positionOf(c, cfg.batchSize);
  }
  const written = { workers: cfg.workers, globalBatch: cfg.batchSize, localBatch: localBatchOf(cfg.batchSize, cfg.workers), learningRate: cfg.learningRate };
  emit({
    type: 'start', model: model.name, modelName: cfg.model, parameters: model.params.length,
    trainExamples: split.train.x.length, testExamples: split.test.x.length, epochs: cfg.epochs,
    batchSize: cfg.batchSize, ...written, baseBatchSize: cfg.baseBatchSize, baseLearningRate: cfg.baseLearningRate,
    seed: cfg.seed, dataset: cfg.dataset, checkpointDir: cfg.checkpointDir,
    resumedFrom: resumed ? {
      file: resumed.file, epoch: pos.epoch, offset: pos.offset, step: pos.step,
      workers: resumed.checkpoint.workers ?? 1, globalBatch: resumed.checkpoint.globalBatch ?? cfg.batchSize,
    } : null,
  });

  /** @param {import('./checkpoint').Position} p @param {string} reason */
  const checkpoint = (p, reason) => {
    const file = saveCheckpoint(cfg.checkpointDir, { ...p, reason, ...written }, model.params);
    emit({ type: 'checkpoint', reason, epoch: p.epoch, offset: p.offset, step: p.step, workers: cfg.workers, globalBatch: cfg.batchSize, path: file });
    return file;
  };
  engine = await DataParallel.start({
    workers: cfg.workers, handlerFile, modelName: cfg.model, seed: cfg.seed, numClasses: data.numClasses, train: split.train, params: model.params,
  });
  trainer = new Trainer({ config: cfg, model, engine, data: split, emit, checkpoint });
  if (stopReason) trainer.requestStop();
  const result = await trainer.run(pos);
  if (result.stopped) {
    checkpoint(result.pos, 'signal');
    emit({ type: 'stopped', reason: stopReason, epoch: result.pos.epoch, offset: result.pos.offset, step: result.pos.step });
  } else {
    if (!resumed || resumed.checkpoint.reason !== 'done' || resumed.checkpoint.step !== result.pos.step) {
      checkpoint(result.pos, 'done');
    }
    const test = model.evaluate(split.test.x, split.test.y);
    emit({ type: 'done', epochs: result.pos.epoch, samples: result.pos.samples, accuracy: round(test.accuracy), testLoss: round(test.loss) });
  }
  await engine.close();
  if (grace) clearTimeout(grace);
  await flushed();
  process.exit(0);
}

/**
 * Resolves once everything written to stdout and stderr has left this process: process.exit()
 * drops writes still queued for a pipe the reader has not drained (the `done` line included).
 */
const flushed = () => Promise.all([process.stdout, process.stderr].map((s) => new Promise((r) => s.write('', () => r(undefined)))));

/** @param {number} x */
const round = (x) => Math.round(x * 1e4) / 1e4;

/**
 * Exit with the parent: poll `process.ppid` every second; a process whose parent is already
 * init (a container's entry point) is not watched.
 * @param {() => void} onGone
 */
function watchParent(onGone) {
  const initial = process.ppid;
  if (initial <= 1) return;
  const t = setInterval(() => {
    if (process.ppid !== initial) {
      clearInterval(t);
      onGone();
    }
  }, 1000);
  t.unref();
}

main().catch(async (err) => {
  log(`fatal: ${err instanceof Error ? err.stack : err}`);
  await flushed();
  process.exit(1);
});
