/**
 * The supervision loop shared by the Redis and tokend supervisors, with fake children and fake
 * timers: a death is restarted after the back-off, which climbs and starts over after a stable
 * run; a failing start is retried; stop() starts nothing more.
 */
import { backoffDelayMs, ChildExit, SupervisedChild, Supervisor, SupervisorOptions } from '../../gateway/lib/supervisor';

const BACKOFF_MS = [100, 500, 1000];
const STABLE_RUN_MS = 30_000;

interface FakeChild extends SupervisedChild {
  die(signal: NodeJS.Signals): void;
  stopped: boolean;
}

function aChild(pid: number): FakeChild {
  let exit!: (e: ChildExit) => void;
  const exited = new Promise<ChildExit>((res) => (exit = res));
  const c: FakeChild = {
    pid,
    exited,
    stopped: false,
    die: (signal) => exit({ code: null, signal }),
    async stop() {
      c.stopped = true;
      exit({ code: 0, signal: null });
    },
  };
  return c;
}

/** A supervisor over fake children; `plan` says, start by start, how it goes (default 'ok'). */
async function aSupervisor(plan: Array<'ok' | 'fail' | 'slow'> = []) {
  const lines: string[] = [];
  const children: FakeChild[] = [];
  const after: number[] = [];
  let slow: (() => void) | undefined;
  let starts = 0;
  const opts: SupervisorOptions<FakeChild> = {
    start: async () => {
      const how = plan[starts++] ?? 'ok';
      if (how === 'fail') throw new Error('no socket');
      if (how === 'slow') await new Promise<void>((res) => (slow = res));
      const c = aChild(100 + children.length);
      children.push(c);
      return c;
    },
    backoffMs: BACKOFF_MS,
    stableRunMs: STABLE_RUN_MS,
    log: (line) => lines.push(line),
    died: (p, exit, delay) => `died ${p.pid} ${exit.signal ?? exit.code} in ${delay}`,
    startFailed: (e, delay) => `failed ${e.message} in ${delay}`,
    restarted: (p, n) => `restarted ${p.pid} #${n}`,
    afterRestart: (p) => after.push(p.pid),
  };
  const s = await Supervisor.start(opts);
  return { s, lines, children, after, finishSlowStart: () => slow?.() };
}

beforeEach(() => jest.useFakeTimers());
afterEach(() => jest.useRealTimers());

test.each([
  { consecutive: -1, want: 100 },
  { consecutive: 0, want: 100 },
  { consecutive: 2, want: 1000 },
  { consecutive: 99, want: 1000 },
])('back-off after $consecutive restarts in a row: $want ms', ({ consecutive, want }) => {
  expect(backoffDelayMs(BACKOFF_MS, consecutive)).toBe(want);
});

test('a child that dies is restarted after the back-off, logged, counted, and the hook runs', async () => {
  const { s, lines, children, after } = await aSupervisor();
  expect(s.current.pid).toBe(100);
  children[0].die('SIGKILL');
  await jest.advanceTimersByTimeAsync(99);
  expect(lines).toEqual(['died 100 SIGKILL in 100']);
  expect(children).toHaveLength(1);
  await jest.advanceTimersByTimeAsync(1);
  expect(lines).toEqual(['died 100 SIGKILL in 100', 'restarted 101 #1']);
  expect(s.current.pid).toBe(101);
  expect(s.restarts).toBe(1);
  expect(after).toEqual([101]);
  await s.stop();
});

test('deaths in a row climb the back-off; a stable run starts it over', async () => {
  const { s, lines, children } = await aSupervisor();
  children[0].die('SIGKILL');
  await jest.advanceTimersByTimeAsync(100);
  children[1].die('SIGSEGV');
  await jest.advanceTimersByTimeAsync(500);
  await jest.advanceTimersByTimeAsync(STABLE_RUN_MS);
  children[2].die('SIGKILL');
  await jest.advanceTimersByTimeAsync(100);
  expect(lines.filter((l) => l.startsWith('died'))).toEqual(['died 100 SIGKILL in 100', 'died 101 SIGSEGV in 500', 'died 102 SIGKILL in 100']);
  expect(s.restarts).toBe(3);
  await s.stop();
});

test('a failing start is retried after the next back-off', async () => {
  const { s, lines, children } = await aSupervisor(['ok', 'fail']);
  children[0].die('SIGKILL');
  await jest.advanceTimersByTimeAsync(100);
  expect(lines).toEqual(['died 100 SIGKILL in 100', 'failed no socket in 500']);
  expect(s.restarts).toBe(0);
  await jest.advanceTimersByTimeAsync(500);
  expect(lines.at(-1)).toBe('restarted 101 #1');
  expect(s.current.pid).toBe(101);
  await s.stop();
});

test('stop() while a restart is pending starts nothing and stops the child', async () => {
  const { s, lines, children, after } = await aSupervisor();
  children[0].die('SIGKILL');
  await jest.advanceTimersByTimeAsync(50);
  await s.stop();
  await jest.advanceTimersByTimeAsync(10_000);
  expect(children).toHaveLength(1);
  expect(lines).toEqual(['died 100 SIGKILL in 100']);
  expect(after).toEqual([]);
});

test('stop() stops the running child; its exit is no death', async () => {
  const { s, lines, children } = await aSupervisor();
  await s.stop();
  await jest.advanceTimersByTimeAsync(10_000);
  expect(children[0].stopped).toBe(true);
  expect(children).toHaveLength(1);
  expect(lines).toEqual([]);
});

test('stop() during a restart stops the child that start brings up and keeps none', async () => {
  const { s, lines, children, after, finishSlowStart } = await aSupervisor(['ok', 'slow']);
  children[0].die('SIGKILL');
  await jest.advanceTimersByTimeAsync(100);
  const stopped = s.stop();
  finishSlowStart();
  await stopped;
  expect(children).toHaveLength(2);
  expect(children[1].stopped).toBe(true);
  expect(s.restarts).toBe(0);
  expect(after).toEqual([]);
  expect(lines).toEqual(['died 100 SIGKILL in 100']);
});
