import { existsSync } from 'node:fs';
import { join } from 'node:path';

/**
 * `mlfaas sim <inference|training> …`: picks the simulator by the first argument. The training
 * simulator (autoscaler/sim/training/cli.ts) is another module's; it is loaded only if present.
 */
export async function main(args: string[]): Promise<number> {
  const [kind, ...rest] = args;
  if (kind === 'inference') return (require('./inference-cli') as typeof import('./inference-cli')).main(rest);
  if (kind === 'training') {
    const dir = join(__dirname, 'training');
    if (!['cli.ts', 'cli.js'].some((f) => existsSync(join(dir, f)))) {
      console.error('mlfaas sim training: the training simulator is not part of this build');
      return 3;
    }
    // a runtime path, so the build does not depend on the other module
    const mod: { main: (a: string[]) => Promise<number> } = require(join(dir, 'cli'));
    return mod.main(rest);
  }
  console.error('usage: mlfaas sim inference --trace FILE --policy NAME [...]   |   mlfaas sim training ...');
  return kind === undefined || kind === '--help' || kind === '-h' ? 0 : 2;
}
