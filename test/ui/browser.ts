import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BrowserContext, chromium, Page } from 'playwright-core';

/**
 * Debian's chromium driven by playwright-core, as issue 26 asks: the fixed flags, a new empty
 * user-data-dir per browser, the gateway's basic-auth credentials given to the browser (its own
 * prompt answered), generous timeouts for two busy cores.
 */
export const CHROMIUM = '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run', '--disable-sync',
];
/** ms: how long a page may take to show what the test waits for on a loaded machine */
export const UI_WAIT_MS = 30000;

export interface TestBrowser {
  ctx: BrowserContext;
  close(): Promise<void>;
}

/** Throws a clear error (how to install it) when chromium is missing. */
export function requireChromium(): void {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: run "npm run setup" as root (it installs Debian's chromium)`);
}

/** A fresh chromium with its own empty profile directory, removed again by `close()`. */
export async function openBrowser(credentials: { username: string; password: string }): Promise<TestBrowser> {
  requireChromium();
  const dir = mkdtempSync(join(tmpdir(), 'mlfaas-chromium-'));
  try {
    const ctx = await chromium.launchPersistentContext(dir, {
      executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS, httpCredentials: credentials, timeout: UI_WAIT_MS * 2,
    });
    ctx.setDefaultTimeout(UI_WAIT_MS);
    return {
      ctx,
      async close() {
        await ctx.close().catch(() => undefined);
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
}

/**
 * Leaves a value in the page's JavaScript globals and returns a check that it is still there: a
 * reload (or a navigation away) would have dropped it, so what the page shows after it came live.
 */
export async function markNoReload(page: Page): Promise<() => Promise<boolean>> {
  const token = `kept-${Date.now()}-${Math.random()}`;
  await page.evaluate((t) => { (globalThis as Record<string, unknown>).__mlfaasNoReload = t; }, token);
  return async () => (await page.evaluate(() => (globalThis as Record<string, unknown>).__mlfaasNoReload)) === token;
}

/** Basic-auth header for the gateway's own REST calls in a test. */
export function basicAuth(username: string, password: string): Record<string, string> {
  return { authorization: `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}` };
}
