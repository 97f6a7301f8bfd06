/**
 * Issue 26: the type a dashboard JSON file in deploy/grafana must have, built only from Grafana's own
 * published types: `@grafana/schema` (generated from Grafana's CUE kinds: the dashboard, and each core
 * panel plugin's options and custom field config) and `@grafana/grafana-foundation-sdk` (the Prometheus
 * data source's query). test/unit/grafana-schema.test.ts compiles `const d: DashboardJson = <file>`
 * with tsc (strict), so a field Grafana does not know (excess property) or of the wrong type fails.
 *
 * Two adaptations, both to how Grafana reads JSON, not loosening of what a field may hold:
 * - `Json<T>`: Grafana's types use TypeScript enums; a JSON file holds their values, so each string
 *   enum is replaced by the union of its values ('list' for LegendDisplayMode.List).
 * - `DeepPartial` on a panel's `options` and `fieldConfig.defaults.custom` only: Grafana fills what a
 *   panel leaves out from the plugin's defaults when it loads the panel (fields the schema marks
 *   required there have defaults, e.g. stat's `wideLayout`), so their absence is not an error.
 */
import type * as raw from '@grafana/schema/dist/types/raw/dashboard/x/types.gen';
import type * as barchart from '@grafana/schema/dist/types/raw/composable/barchart/panelcfg/x/types.gen';
import type * as bargauge from '@grafana/schema/dist/types/raw/composable/bargauge/panelcfg/x/types.gen';
import type * as gauge from '@grafana/schema/dist/types/raw/composable/gauge/panelcfg/x/types.gen';
import type * as heatmap from '@grafana/schema/dist/types/raw/composable/heatmap/panelcfg/x/types.gen';
import type * as histogram from '@grafana/schema/dist/types/raw/composable/histogram/panelcfg/x/types.gen';
import type * as piechart from '@grafana/schema/dist/types/raw/composable/piechart/panelcfg/x/types.gen';
import type * as stat from '@grafana/schema/dist/types/raw/composable/stat/panelcfg/x/types.gen';
import type * as statetimeline from '@grafana/schema/dist/types/raw/composable/statetimeline/panelcfg/x/types.gen';
import type * as statushistory from '@grafana/schema/dist/types/raw/composable/statushistory/panelcfg/x/types.gen';
import type * as table from '@grafana/schema/dist/types/raw/composable/table/panelcfg/x/types.gen';
import type * as text from '@grafana/schema/dist/types/raw/composable/text/panelcfg/x/types.gen';
import type * as timeseries from '@grafana/schema/dist/types/raw/composable/timeseries/panelcfg/x/types.gen';
import type * as prometheus from '@grafana/grafana-foundation-sdk/dist/prometheus/types.gen';

/** A type as JSON holds it: string enums become the union of their values; arrays and objects map through. */
export type Json<T> =
  T extends string ? `${T}`
    : T extends number | boolean | null | undefined ? T
      : T extends ReadonlyArray<infer U> ? Array<Json<U>>
        : T extends object ? { [K in keyof T]: Json<T[K]> }
          : T;

/** Every field optional, at every depth (for what Grafana fills from a plugin's defaults). */
export type DeepPartial<T> =
  T extends ReadonlyArray<infer U> ? Array<DeepPartial<U>>
    : T extends object ? { [K in keyof T]?: DeepPartial<T[K]> }
      : T;

/** A Prometheus target: the Prometheus plugin's query (its builder-only marker method left out). */
export type PrometheusTarget = Json<Omit<prometheus.Dataquery, '_implementsDataqueryVariant'>>;

/** A field config source whose `defaults.custom` is the panel plugin's custom field config `C`. */
export type FieldConfigSourceJson<C> = Omit<Json<raw.FieldConfigSource>, 'defaults'> & {
  defaults: Omit<Json<raw.FieldConfig>, 'custom'> & { custom?: DeepPartial<Json<C>> };
};

/** A panel of plugin `T`, with options `O` and custom field config `C`, querying Prometheus. */
export type PanelOf<T extends string, O, C = Record<string, never>> = Omit<Json<raw.Panel>, 'type' | 'options' | 'fieldConfig' | 'targets'> & {
  type: T;
  options?: DeepPartial<Json<O>>;
  fieldConfig?: FieldConfigSourceJson<C>;
  targets?: PrometheusTarget[];
};

/** The core panel plugins a dashboard here may use, each with its own options. */
export type PanelJson =
  | PanelOf<'timeseries', timeseries.Options, timeseries.FieldConfig>
  | PanelOf<'stat', stat.Options>
  | PanelOf<'table', table.Options, table.FieldConfig>
  | PanelOf<'state-timeline', statetimeline.Options, statetimeline.FieldConfig>
  | PanelOf<'status-history', statushistory.Options, statushistory.FieldConfig>
  | PanelOf<'bargauge', bargauge.Options>
  | PanelOf<'gauge', gauge.Options>
  | PanelOf<'barchart', barchart.Options, barchart.FieldConfig>
  | PanelOf<'piechart', piechart.Options, piechart.FieldConfig>
  | PanelOf<'heatmap', heatmap.Options, heatmap.FieldConfig>
  | PanelOf<'histogram', histogram.Options, histogram.FieldConfig>
  | PanelOf<'text', text.Options>;

/** A collapsible row holding panels. */
export type RowJson = Omit<Json<raw.RowPanel>, 'panels'> & { panels: PanelJson[] };

/** A dashboard file: Grafana's dashboard kind with the panels above. */
export type DashboardJson = Omit<Json<raw.Dashboard>, 'panels'> & { panels?: Array<PanelJson | RowJson> };
