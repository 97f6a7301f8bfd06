// Screenshots of the dashboard's pages for the README (issue 26): `npx tsx bench/ui-screenshots.ts`
// against a running platform (`npm start`). Writes bench/results/ui/<page>.png.
//   MLFAAS_URL            the gateway (default http://127.0.0.1:8080)
//   MLFAAS_AUTH_USER      default admin
//   MLFAAS_AUTH_PASSWORD  default: <MLFAAS_DATA_DIR or .mlfaas>/basic-auth-password, as the gateway saved it
//   UI_FUNCTION           the function for #/function/NAME (default digits-classify)
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium } from 'playwright-core';

const ROOT = resolve(__dirname, '..');
const OUT = join(ROOT, 'bench', 'results', 'ui');
const ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run', '--disable-sync',
];

function password(): string {
  if (process.env.MLFAAS_AUTH_PASSWORD) return process.env.MLFAAS_AUTH_PASSWORD;
  const file = join(resolve(process.env.MLFAAS_DATA_DIR ?? join(ROOT, '.mlfaas')), 'basic-auth-password');
  if (!existsSync(file)) throw new Error(`no password: set MLFAAS_AUTH_PASSWORD, or start the platform first (${file} is missing)`);
  return readFileSync(file, 'utf8').trim();
}

async function main() {
  const url = (process.env.MLFAAS_URL ?? 'http://127.0.0.1:8080').replace(/\/$/, '');
  const fn = process.env.UI_FUNCTION ?? 'digits-classify';
  const credentials = { username: process.env.MLFAAS_AUTH_USER ?? 'admin', password: password() };
  const probe = await fetch(`${url}/healthz`).catch((e: Error) => e);
  if (probe instanceof Error || !probe.ok) throw new Error(`no platform at ${url} (start one with npm start, or set MLFAAS_URL)`);
  mkdirSync(OUT, { recursive: true });
  const dir = mkdtempSync(join(tmpdir(), 'mlfaas-shots-'));
  const ctx = await chromium.launchPersistentContext(dir, {
    executablePath: '/usr/bin/chromium', headless: true, args: ARGS, httpCredentials: credentials, viewport: { width: 1400, height: 800 },
  });
  try {
    const page = await ctx.newPage();
    const pages: Array<[string, string]> = [
      ['functions', 'functions'], [`function/${encodeURIComponent(fn)}`, 'function'], ['jobs', 'jobs'], ['nodes', 'nodes'],
    ];
    for (const [hash, name] of pages) {
      const res = await page.goto(`${url}/ui/#/${hash}`, { timeout: 30000 });
      if (res && res.status() !== 200) throw new Error(`${url}/ui/ answered ${res.status()}: wrong credentials?`);
      await page.waitForSelector(`[data-page="${name}"]`, { timeout: 30000 });
      // two overview updates, so live values are on the page
      await page.waitForSelector('#conn[data-conn="live"]', { timeout: 30000 });
      await page.waitForTimeout(2500);
      const file = join(OUT, `${name}.png`);
      await page.screenshot({ path: file, fullPage: true });
      console.log(`wrote ${file}`);
    }
  } finally {
    await ctx.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(`ui-screenshots: ${(e as Error).message}`);
  process.exit(1);
});
