import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parse } from 'yaml';
import { ImageManifest, ImageStore } from '../gateway/providers/local/image-store';
import { StackFunction } from './stack';

interface TemplateYml {
  language?: string;
  fprocess?: string;
  mlfaas?: { kind?: 'inference' | 'training'; mode?: 'http' | 'job' | 'classic'; health?: string; readiness?: string };
}

/** Finds `<lang>/template.yml` in `./template` beside the stack file, then in the templates dir. */
export function findTemplate(lang: string, stackDir: string, templatesDir: string): string {
  for (const base of [join(stackDir, 'template'), templatesDir]) {
    const dir = join(base, lang);
    if (existsSync(join(dir, 'template.yml'))) return dir;
  }
  throw new Error(`template "${lang}" not found in ${join(stackDir, 'template')} or ${templatesDir}`);
}

/** The `fprocess` of a function's language template (faas-cli sends it as envProcess), if any. */
export function templateFprocess(f: StackFunction, stackFile: string, templatesDir: string): string | undefined {
  if (!f.lang || f.lang === 'dockerfile') return undefined;
  const t = parse(readFileSync(join(findTemplate(f.lang, dirname(stackFile), templatesDir), 'template.yml'), 'utf8')) as TemplateYml;
  return typeof t.fprocess === 'string' ? t.fprocess : undefined;
}

/**
 * An `ml-inference` image serves `function/$MODEL_PATH` (default `model.onnx`): without it every
 * replica would crash at start, so the build refuses, naming the file it expected. A function whose
 * stack.yml annotations name `mlfaas.model.uri` builds without one (docs/models.md).
 */
function requireModel(f: StackFunction, work: string, handlerDir: string): void {
  // a model by URI is fetched by the node at replica start: a new version is a deploy, not a build
  if (f.annotations['mlfaas.model.uri'] !== undefined) return;
  const rel = f.environment.MODEL_PATH || 'model.onnx';
  if (existsSync(join(work, 'function', rel))) return;
  throw new Error(
    `functions.${f.name}: an ml-inference function needs its ONNX model at ${resolve(handlerDir, rel)} (not found); ` +
      'put the model there or set environment.MODEL_PATH (relative to the handler folder)',
  );
}

/**
 * Shrinkwraps one function like `faas-cli build --shrinkwrap` — the template's files with the
 * handler folder as `function/` — and stores it in the local image store under its image name.
 */
export function buildFunction(f: StackFunction, stackFile: string, templatesDir: string, store: ImageStore): ImageManifest {
  if (!f.lang) throw new Error(`functions.${f.name}.lang is required to build`);
  const work = mkdtempSync(join(tmpdir(), `mlfaas-build-${f.name}-`));
  try {
    let manifest: Omit<ImageManifest, 'dir' | 'image' | 'builtAt'>;
    if (f.lang === 'dockerfile') {
      if (!f.handler) throw new Error(`functions.${f.name}.handler is required`);
      cpSync(f.handler, work, { recursive: true });
      manifest = { language: 'dockerfile', kind: 'classic', mode: 'classic', fprocess: f.fprocess };
    } else {
      const tdir = findTemplate(f.lang, dirname(stackFile), templatesDir);
      const t = parse(readFileSync(join(tdir, 'template.yml'), 'utf8')) as TemplateYml;
      const fnDir = join(tdir, 'function');
      const skip = (src: string) => src === fnDir || src.startsWith(fnDir + '/') || src.split('/').includes('node_modules');
      cpSync(tdir, work, { recursive: true, filter: (src) => !skip(src) });
      if (f.handler) cpSync(f.handler, join(work, 'function'), { recursive: true });
      else cpSync(join(tdir, 'function'), join(work, 'function'), { recursive: true });
      if ((t.language ?? f.lang) === 'ml-inference') requireModel(f, work, f.handler ?? fnDir);
      const m = t.mlfaas;
      manifest = m
        ? { language: f.lang, kind: m.kind ?? 'inference', mode: m.mode ?? 'http', fprocess: t.fprocess, health: m.health, readiness: m.readiness }
        : { language: f.lang, kind: 'classic', mode: 'classic', fprocess: t.fprocess };
    }
    return store.put(f.image, work, manifest);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
