/**
 * Images are immutable: a build is a new complete version directory and `current` switches to
 * it atomically; a version a process runs in is never modified or deleted.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ImageStore, MANIFEST } from '../../gateway/providers/local/image-store';
import { seedImage } from '../helpers/images';

const IMAGE = 'test/immutable:1';
const build = (store: ImageStore, version: number) =>
  seedImage(store, IMAGE, { 'a.js': String(version), 'b.js': `module.exports = ${version};\n` },
    { language: `v${version}`, kind: 'inference', mode: 'http', fprocess: 'node a.js' });

describe('ImageStore versions', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'mlfaas-images-'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('a rebuild never touches the version a process runs in; unused old versions are collected', async () => {
    const store = new ImageStore(root);
    const v1 = build(store, 1);
    expect(store.find(IMAGE)!.dir).toBe(v1.dir);
    // a replica of v1, running with its cwd there
    const replica = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { cwd: v1.dir, stdio: 'ignore' });
    try {
      await new Promise((r) => setTimeout(r, 200));
      const v2 = build(store, 2);
      const v3 = build(store, 3);
      const v4 = build(store, 4);
      expect(new Set([v1.dir, v2.dir, v3.dir, v4.dir]).size).toBe(4);
      // the running one is intact
      expect(readFileSync(join(v1.dir!, 'a.js'), 'utf8')).toBe('1');
      expect(JSON.parse(readFileSync(join(v1.dir!, MANIFEST), 'utf8')).language).toBe('v1');
      // the new one is complete and current
      const cur = store.find(IMAGE)!;
      expect(cur.dir).toBe(v4.dir);
      expect(cur.language).toBe('v4');
      expect(readFileSync(join(cur.dir!, 'b.js'), 'utf8')).toBe('module.exports = 4;\n');
      // unused and not the previous: gone; the previous is kept (a replica may be starting from it)
      expect(existsSync(v2.dir!)).toBe(false);
      expect(existsSync(v3.dir!)).toBe(true);
    } finally {
      replica.kill('SIGKILL');
      await new Promise((r) => replica.once('exit', r));
    }
    build(store, 5);
    expect(existsSync(v1.dir!)).toBe(false); // no process uses it any more
  });

  it('readers see the old version or the new one, never a partial one, while builds run', async () => {
    const store = new ImageStore(root);
    build(store, 0);
    const home = store.dirOf(IMAGE);
    // another process resolves `current` and reads the version, as a replica start does
    const reader = `
      const fs = require('fs'), path = require('path');
      let reads = 0, collected = 0, broken = [];
      const end = Date.now() + 3000;
      while (Date.now() < end) {
        let dir;
        try { dir = fs.realpathSync(path.join(${JSON.stringify(home)}, 'current')); }
        catch (e) { broken.push('no current: ' + e.code); continue; }
        try {
          const m = JSON.parse(fs.readFileSync(path.join(dir, ${JSON.stringify(MANIFEST)}), 'utf8'));
          const a = fs.readFileSync(path.join(dir, 'a.js'), 'utf8');
          const b = fs.readFileSync(path.join(dir, 'b.js'), 'utf8');
          if (m.language !== 'v' + a || b !== 'module.exports = ' + a + ';\\n') broken.push(dir);
          reads++;
        } catch (e) { if (e.code === 'ENOENT') collected++; else broken.push(String(e)); }
      }
      console.log(JSON.stringify({ reads, collected, broken: broken.slice(0, 5) }));`;
    const child = spawn(process.execPath, ['-e', reader], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout!.on('data', (b: Buffer) => (out += b.toString()));
    const done = new Promise((r) => child.once('exit', r));
    for (let v = 1; v <= 30; v++) {
      build(store, v);
      await new Promise((r) => setTimeout(r, 20));
    }
    await done;
    const got = JSON.parse(out) as { reads: number; collected: number; broken: string[] };
    expect(got.broken).toEqual([]);
    expect(got.reads).toBeGreaterThan(0);
    expect(store.find(IMAGE)!.language).toBe('v30');
    // only the current and the previous version are left (plus nothing half-built)
    expect(readdirSync(home).filter((e) => e.startsWith('v-')).length).toBe(2);
  }, 30000);

  it('takes over an image stored in the old layout without moving it under a running replica', () => {
    const store = new ImageStore(root);
    const legacy = store.dirOf(IMAGE);
    mkdirSync(legacy, { recursive: true });
    writeFileSync(join(legacy, 'a.js'), 'old');
    writeFileSync(join(legacy, MANIFEST),
      JSON.stringify({ image: IMAGE, language: 'vold', kind: 'inference', mode: 'http', builtAt: new Date(0).toISOString() }));
    expect(store.find(IMAGE)!.language).toBe('vold');
    const v1 = build(store, 1);
    expect(store.find(IMAGE)!.dir).toBe(v1.dir);
    expect(readFileSync(join(realpathSync(legacy), 'v-legacy', 'a.js'), 'utf8')).toBe('old');
  });
});
