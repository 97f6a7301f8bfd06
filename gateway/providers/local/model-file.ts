import { existsSync, realpathSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * The function's ONNX file in its image (`function/` + `MODEL_PATH`, default model.onnx), or
 * undefined when there is none or the path leads out of the image (a link, `..`).
 */
export function modelFile(imageDir: string | undefined, env: Record<string, string> | undefined): string | undefined {
  if (!imageDir) return undefined;
  const fn = join(imageDir, 'function');
  const file = join(fn, env?.MODEL_PATH ?? 'model.onnx');
  if (!file.endsWith('.onnx') || !existsSync(file)) return undefined;
  const rel = relative(realpathSync(fn), realpathSync(file));
  return rel && !rel.startsWith('..') && !rel.startsWith('/') ? file : undefined;
}
