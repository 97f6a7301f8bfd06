/**
 * Runs one shutdown step, waiting for it at most `ms`: a step that fails or hangs (a store that
 * is gone, a child that ignores SIGTERM) is logged and skipped, never thrown, so shutdown always
 * ends in bounded time whatever died first.
 */
export async function bounded(name: string, ms: number, fn: () => unknown, log: (line: string) => void): Promise<void> {
  let t: NodeJS.Timeout | undefined;
  const overrun = new Promise<'overrun'>((r) => (t = setTimeout(() => r('overrun'), ms)));
  try {
    const r = await Promise.race([Promise.resolve().then(fn).then(() => 'done' as const), overrun]);
    if (r === 'overrun') log(`shutdown: ${name} did not finish in ${ms} ms; going on`);
  } catch (e) {
    log(`shutdown: ${name} failed: ${(e as Error).message}`);
  } finally {
    clearTimeout(t);
  }
}
