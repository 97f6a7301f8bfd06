import { readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import ts from 'typescript';
import { DASHBOARD_DIR, dashboardFiles } from '../../deploy/grafana/schema/queries';

/**
 * Issue 26 ("Done means": the dashboards import into Grafana's schema). Grafana is not in Debian's
 * archive and no Docker daemon runs here, so instead of loading them into a Grafana, each
 * deploy/grafana/*.json is type-checked by tsc against Grafana's own published types (@grafana/schema:
 * the dashboard kind and each core panel's options; the foundation SDK's Prometheus query), as
 * `const d: DashboardJson = <file>` (deploy/grafana/schema/grafana-json.ts): strict, with tsc's
 * excess-property check on the object literal, so an unknown field or a value of the wrong type fails.
 * The sources are virtual files beside grafana-json.ts (nothing is written), compiled in one program.
 */

const SCHEMA_DIR = join(DASHBOARD_DIR, 'schema');
const OPTIONS: ts.CompilerOptions = {
  strict: true,
  noEmit: true,
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.CommonJS,
  moduleResolution: ts.ModuleResolutionKind.Node10,
  lib: ['lib.es2022.d.ts'],
  types: [],
  skipLibCheck: true,
};

/** The source that types `json` (a dashboard's text) as a Grafana dashboard. */
const checkSource = (json: string) => `import type { DashboardJson } from './grafana-json';\nexport const dashboard: DashboardJson = ${json};\n`;

/** tsc's errors in each of `sources` (name → dashboard JSON text), as 'line N: TSxxxx message' per name. */
function typeErrors(sources: Record<string, string>): Record<string, string[]> {
  const virtual = new Map(Object.entries(sources).map(([name, json]) => [join(SCHEMA_DIR, `check-${name}.ts`), checkSource(json)]));
  const host = ts.createCompilerHost(OPTIONS);
  const { getSourceFile, fileExists, readFile } = host;
  host.getSourceFile = (f, lang, ...rest) => (virtual.has(f) ? ts.createSourceFile(f, virtual.get(f)!, lang) : getSourceFile.call(host, f, lang, ...rest));
  host.fileExists = (f) => virtual.has(f) || fileExists.call(host, f);
  host.readFile = (f) => virtual.get(f) ?? readFile.call(host, f);
  const program = ts.createProgram([...virtual.keys()], OPTIONS, host);
  const out: Record<string, string[]> = Object.fromEntries(Object.keys(sources).map((n) => [n, []]));
  for (const d of ts.getPreEmitDiagnostics(program)) {
    const name = d.file ? basename(d.file.fileName).replace(/^check-(.*)\.ts$/, '$1') : '(global)';
    const line = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line + 1 : 0;
    (out[name] ??= []).push(`line ${line}: TS${d.code} ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
  }
  return out;
}

type Mutable = Record<string, any>;
const files = dashboardFiles();
const text = (f: string) => readFileSync(join(DASHBOARD_DIR, f), 'utf8');
const overview = () => JSON.parse(text('functions-overview.json')) as Mutable;
const panelOf = (d: Mutable, type: string) => (d.panels as Mutable[]).find((p) => p.type === type)!;

/** Mutated copies of the overview dashboard, each with one fault Grafana's types must reject, and what the error must name. */
const MUTATIONS: Array<{ name: string; mutate: (d: Mutable) => void; want: RegExp }> = [
  {
    name: 'panel-unknown-property',
    mutate: (d) => (panelOf(d, 'timeseries').legend = { showLegend: true }),
    want: /TS2353 .*"legend"' does not exist in type 'PanelOf<"timeseries"/,
  },
  {
    name: 'timeseries-bad-option',
    mutate: (d) => (panelOf(d, 'timeseries').options.legend.displayMode = 'tabel'),
    want: /TS2(322|820) Type '"tabel"' is not assignable/,
  },
  { name: 'stat-bad-option-type', mutate: (d) => (panelOf(d, 'stat').options.reduceOptions.calcs = 'lastNotNull'), want: /TS2322 .*not assignable/ },
  { name: 'gridpos-string', mutate: (d) => (panelOf(d, 'table').gridPos.w = '12'), want: /TS2322 .*'string' is not assignable to type 'number'/ },
  { name: 'unknown-panel-type', mutate: (d) => (panelOf(d, 'timeseries').type = 'graph'), want: /TS2322 .*"graph"/ },
  {
    name: 'target-bad-format',
    mutate: (d) => (panelOf(d, 'table').targets[0].format = 'timeseries'),
    want: /TS2(322|820) Type '"timeseries"' is not assignable to type .*"time_series"/,
  },
  { name: 'target-unknown-field', mutate: (d) => (panelOf(d, 'stat').targets[0].exp = 'up'), want: /TS2353 .*"exp"' does not exist/ },
  { name: 'no-schema-version', mutate: (d) => delete d.schemaVersion, want: /TS2322 [\s\S]*Property 'schemaVersion' is missing/ },
  {
    name: 'table-footer-option', // what the table panel's options held before (fixed in the dashboards)
    mutate: (d) => (panelOf(d, 'table').options.footer = { show: false, reducer: ['sum'], fields: '' }),
    want: /TS2353 .*"footer"' does not exist/,
  },
  {
    name: 'timeseries-unknown-custom-field',
    mutate: (d) => (panelOf(d, 'timeseries').fieldConfig.defaults.custom = { drawStyle: 'line', lineWidht: 2 }),
    want: /TS2353 .*"lineWidht"' does not exist/,
  },
  { name: 'variable-empty-current', mutate: (d) => (d.templating.list[0].current = {}), want: /TS2739 .*text, value/ },
];

describe("deploy/grafana dashboards against Grafana's own types (@grafana/schema, issue 26)", () => {
  let errors: Record<string, string[]>;
  beforeAll(() => {
    const sources: Record<string, string> = Object.fromEntries(files.map((f) => [f.replace(/\.json$/, ''), text(f)]));
    for (const m of MUTATIONS) {
      const d = overview();
      m.mutate(d);
      sources[`mutated-${m.name}`] = JSON.stringify(d, null, 2);
    }
    sources.roundtrip = JSON.stringify(overview(), null, 2); // the same round trip as the mutations, no fault
    errors = typeErrors(sources);
  }, 180000);

  it('compiles nothing but the dashboards and their cases (no error outside them, e.g. a missing package)', () => {
    expect(errors['(global)'] ?? []).toEqual([]);
    expect(Object.keys(errors).filter((n) => !n.startsWith('mutated-') && n !== 'roundtrip' && !files.includes(`${n}.json`))).toEqual([]);
  });

  it.each(files)('%s type-checks as a Grafana dashboard', (f) => {
    expect(errors[f.replace(/\.json$/, '')]).toEqual([]);
  });

  it.each(MUTATIONS.map((m) => [m.name, m.want] as const))('rejects a dashboard with a fault: %s', (name, want) => {
    const got = errors[`mutated-${name}`];
    expect(got.length).toBeGreaterThan(0);
    expect(got).toEqual(expect.arrayContaining([expect.stringMatching(want)]));
  });

  it('the unmutated overview, through the same JSON round trip, has no error (the faults come from the mutations)', () => {
    expect(errors.roundtrip).toEqual([]);
  });
});
