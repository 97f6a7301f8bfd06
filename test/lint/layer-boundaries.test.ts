/**
 * The layer rule in eslint.config.js fires: the gateway never imports the autoscaler (nor the
 * composition root), the node runtime imports neither the autoscaler nor a provider's
 * implementation. Linted from memory (`lintText` with a path): no file is written to the tree.
 */
import { join } from 'node:path';
import { ESLint } from 'eslint';

const ROOT = join(__dirname, '..', '..');
// the config is loaded here: ESLint's own loader uses import(), which Jest's VM does not offer
// eslint-disable-next-line @typescript-eslint/no-require-imports
const config = require(join(ROOT, 'eslint.config.js')) as ESLint.Options['overrideConfig'];
const eslint = new ESLint({ cwd: ROOT, overrideConfigFile: true, overrideConfig: config });

async function rulesFired(file: string, code: string): Promise<string[]> {
  const [r] = await eslint.lintText(code, { filePath: join(ROOT, file) });
  return r.messages.map((m) => `${m.ruleId}: ${m.message}`);
}

const BOUNDARY = /^(@typescript-eslint\/no-restricted-imports|no-restricted-syntax): .*gateway\/ must not import autoscaler\//;

describe('gateway/ → autoscaler/ is refused', () => {
  test.each([
    ['an import', "import { startAutoscaler } from '../../autoscaler/live/start';\nexport const x = startAutoscaler;\n"],
    ['a type import', "import type { TrainingPolicy } from '../../autoscaler/training/types';\nexport type X = TrainingPolicy;\n"],
    ['a re-export', "export { admit } from '../../autoscaler/training/admit';\n"],
    ['a package index', "export * from '../../autoscaler/training';\n"],
    ['a require()', "export const m = require('../../autoscaler/sim/cli');\n"],
    ['an import()', "export const m = import('../../autoscaler/sim/cli');\n"],
  ])('%s', async (_what, code) => {
    const fired = await rulesFired('gateway/jobs/boundary-probe.ts', code);
    expect(fired).toHaveLength(1);
    expect(fired[0]).toMatch(BOUNDARY);
  });

  test('the composition root is refused too', async () => {
    expect(await rulesFired('gateway/server-probe.ts', "export { startPlatformGateway } from '../cli/compose';\n"))
      .toEqual([expect.stringMatching(/gateway\/ must not import autoscaler\/ or cli\//)]);
  });

  test('a port on the gateway side passes', async () => {
    expect(await rulesFired('gateway/jobs/boundary-probe.ts', "import type { JobBook } from '../ports/training-jobs';\nexport type B = JobBook;\n"))
      .toEqual([]);
  });

  test('the autoscaler may import the gateway (it is its client)', async () => {
    expect(await rulesFired('autoscaler/live/boundary-probe.ts', "import { Lease } from '../../gateway/lib/lease';\nexport const L = Lease;\n")).toEqual([]);
  });
});

describe('node-runtime/ stays below both providers and the autoscaler', () => {
  test.each([
    ['the autoscaler', "import { trainingScheduler } from '../autoscaler/training/scheduler';\nexport const s = trainingScheduler;\n"],
    ['the local provider', "import { LocalAgent } from '../gateway/providers/local/agent';\nexport const a = LocalAgent;\n"],
    ['the Kubernetes provider', "import { NodeAgent } from '../gateway/providers/kubernetes/node-agent';\nexport const a = NodeAgent;\n"],
  ])('%s is refused', async (_what, code) => {
    expect(await rulesFired('node-runtime/boundary-probe.ts', code)).toEqual([expect.stringMatching(/node-runtime\/ must not import/)]);
  });

  test('the provider contract passes', async () => {
    expect(await rulesFired('node-runtime/boundary-probe.ts',
      "import type { Enforcement } from '../gateway/providers/function-provider';\nexport type E = Enforcement;\n")).toEqual([]);
  });
});
