/**
 * Issue 26, part 3: a training job submitted from the dashboard appears with its plan and
 * progresses on the open page without a reload.
 *
 * Everything is real: Redis, the gateway with its agent and the training round loop, the example
 * training function `digits-train` built from stack.yml (data-parallel training of the digits MLP
 * in child processes), and Debian's chromium on `#/jobs` with the admin credentials. The job is
 * submitted through the page's own form (function, epochs, deadline in seconds from now); the
 * test reads the admitted record over REST and checks that the page shows that record's plan (the
 * planned workers of each round as Gantt bars, the deadline) and that the shown progress grows,
 * up to 100 % and `completed` or a bounded time, while the document is never reloaded.
 */
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { buildFunction } from '../../cli/build';
import { readStack } from '../../cli/stack';
import type { JobRecord } from '../../gateway/jobs/job-record';
import { testGateway, testRedis, TestPlatform } from '../helpers/platform';
import { basicAuth, markNoReload, openBrowser, requireChromium, TestBrowser, UI_WAIT_MS } from './browser';

const ROOT = join(__dirname, '../..');
const NAME = 'digits-train';
const PASSWORD = 'live-training-s3cret';
const auth = basicAuth('admin', PASSWORD);
/** Epochs of the digits MLP: long enough for several of the page's 2 s polls, short enough to finish on a busy host. */
const EPOCHS = 150;
/** s from submission: generous, so admission is certain on a loaded machine */
const DEADLINE_S = 900;
/** ms the test watches the progress grow before it stops waiting for `completed` */
const WATCH_MS = 75000;
// rounds of 1 s so the loop acts quickly (as test/integration/jobs.test.ts)
const ENV = { MLFAAS_BASIC_AUTH: 'true', MLFAAS_AUTH_PASSWORD: PASSWORD, MLFAAS_TRAINING_SLOT_S: '1', MLFAAS_TRAINING_LOCK_MS: '1500' };

describe('dashboard in chromium: a training job submitted on #/jobs', () => {
  let redis: Awaited<ReturnType<typeof testRedis>>;
  let p: TestPlatform;
  let browser: TestBrowser | undefined;
  const record = async (id: string) => (await (await p.get(`/system/jobs/${id}`, { headers: auth })).json()) as JobRecord;

  beforeAll(async () => {
    requireChromium();
    redis = await testRedis();
    p = await testGateway(redis.url, ENV);
    const stack = readStack(join(ROOT, 'stack.yml'));
    const fn = stack.functions.find((f) => f.name === NAME)!;
    buildFunction(fn, stack.file, p.cfg.templatesDir, p.images);
    const res = await p.json('POST', '/system/functions', { service: NAME, image: fn.image, labels: {}, annotations: fn.annotations }, auth);
    expect({ status: res.status, body: await res.text() }).toEqual(expect.objectContaining({ status: 202 }));
  }, 150000);

  afterAll(async () => {
    await browser?.close();
    await p?.stop();
    await redis?.stop();
  }, 60000);

  it('appears with its plan and deadline, and its progress grows without a reload', async () => {
    browser = await openBrowser({ username: 'admin', password: PASSWORD });
    const page: Page = await browser.ctx.newPage();
    const res = await page.goto(`${p.gw.url}/ui/#/jobs`, { timeout: UI_WAIT_MS });
    expect(res?.status()).toBe(200);
    await page.waitForSelector('#conn[data-conn="live"]', { timeout: UI_WAIT_MS });
    await page.locator('[data-page="jobs"] [data-part="rows"]', { hasText: 'no training jobs' }).waitFor({ timeout: UI_WAIT_MS });
    const sameDocument = await markNoReload(page);

    // the page's own form: function (its default), epochs, deadline in seconds from now
    const form = page.locator('[data-page="jobs"] form[data-part="submit"]');
    expect(await form.locator('input[name="function"]').inputValue()).toBe(NAME);
    await form.locator('input[name="length"]').fill(String(EPOCHS));
    await form.locator('input[name="deadline"]').fill(String(DEADLINE_S));
    await form.locator('button[type="submit"]').click();
    const status = page.locator('[data-part="submit-status"]');
    await status.filter({ hasText: /admitted|refused|HTTP|failed/ }).waitFor({ timeout: UI_WAIT_MS * 2 });
    const said = (await status.textContent()) ?? '';
    const id = /^admitted (\S+):/.exec(said)?.[1];
    expect({ said, id }).toEqual(expect.objectContaining({ id: expect.stringMatching(/^[0-9a-f-]{36}$/) }));

    // what the gateway admitted: this function, these epochs, a plan and the deadline asked for
    const rec = await record(id!);
    expect(rec).toEqual(expect.objectContaining({ function: NAME, epochs: EPOCHS, deadline: expect.any(String) }));
    const planned = rec.plannedRounds.filter((w) => w > 0);
    expect(planned.length).toBeGreaterThan(0);
    expect(Date.parse(rec.deadline!) - Date.parse(rec.submittedAt)).toBeGreaterThan((DEADLINE_S - 60) * 1000);

    // the page shows that job with its plan: its row, its deadline, one planned Gantt bar per planned round with its workers
    const row = page.locator(`[data-page="jobs"] tr[data-job="${id}"]`);
    await row.waitFor({ timeout: UI_WAIT_MS });
    expect(await row.textContent()).toContain(rec.deadline!);
    const plannedBars = page.locator('[data-page="jobs"] svg.gantt rect.bar.planned');
    await plannedBars.first().waitFor({ timeout: UI_WAIT_MS });
    expect(await plannedBars.locator('title').allTextContents()).toEqual(planned.map((w) => `${w} worker(s)`));
    expect(await page.locator('[data-page="jobs"] svg.gantt line.deadline').count()).toBeGreaterThan(0);

    // its progress grows on the open page (overview stream and the page's poll), to completed or for WATCH_MS
    const pct = async () => Number(((await row.locator('[data-field="progress"]').textContent()) ?? '').replace('%', ''));
    const seen: number[] = [await pct()];
    const stop = Date.now() + WATCH_MS;
    let state = (await row.getAttribute('data-state')) ?? '';
    for (let i = 0; i < 1000 && Date.now() < stop && state !== 'completed' && state !== 'failed'; i++) {
      await page.waitForTimeout(250);
      const v = await pct();
      if (v !== seen[seen.length - 1]) seen.push(v);
      state = (await row.getAttribute('data-state')) ?? '';
    }
    const after = await record(id!);
    const story = { seen, state, recorded: { state: after.state, progress: after.progress, allocations: after.allocations.length } };
    expect(story.state).not.toBe('failed');
    // grew, and never went back
    expect(seen.length).toBeGreaterThan(1);
    expect(seen[seen.length - 1]).toBeGreaterThan(seen[0]);
    for (let i = 1; i < seen.length; i++) expect(seen[i]).toBeGreaterThanOrEqual(seen[i - 1]);
    if (state === 'completed') expect(seen[seen.length - 1]).toBe(100);
    // the workers the loop gave it show as actual Gantt bars
    expect(await page.locator('[data-page="jobs"] svg.gantt rect.bar.actual').count()).toBeGreaterThan(0);
    expect(await sameDocument()).toBe(true);
    console.log(`digits-train ${EPOCHS} epochs on #/jobs: plan ${planned.join(',')} workers, progress seen ${seen.join(' → ')} %, state ${state}`);
  }, 180000);
});
