import { existsSync } from 'node:fs';
import { cpus, hostname } from 'node:os';
import { Router } from 'express';
import { invalid } from '../errors';
import type { Enforcement, FunctionProvider } from '../providers/function-provider';
import { createTokendControl, type TokendStats } from '../../node-runtime/tokend-control';
import {
  type ClusterNodeFacts, clusterNodes, clusterViews, type NodeDevices, type NodesAnswer, noClusters, type TokendView, tokendView,
} from './nodes-model';

/** tokend as the route reads it: its STATS and where they come from, or why it does not run here. */
export type TokendSource = { source: string; stats: () => Promise<TokendStats> } | { absent: string };

/** A cluster's nodes (Kubernetes), or why there are none. */
export type ClusterSource = { source: string; nodes: () => Promise<ClusterNodeFacts[]> } | { absent: string };

export interface NodesSources {
  provider: () => string;
  enforcement: () => Enforcement;
  /** The one node of the local provider. */
  local?: { name: string; devices: NodeDevices };
  /** Read per request: tokend may start, stop and restart while the gateway runs. */
  tokend: () => TokendSource;
  clusters: ClusterSource;
  /** Bound on each source, ms (default 2500): a silent tokend or API server answers as absent, not as a hang. */
  timeoutMs?: number;
  now?: () => number;
}

/**
 * tokend's control socket at `controlPath()` (the local provider's node); absent while the socket
 * is not there (MLFAAS_TOKEND=false, binary not built, or the agent's process not started yet).
 */
export function localTokend(controlPath: () => string | undefined, timeoutMs = 1000): () => TokendSource {
  return () => {
    const p = controlPath();
    if (!p || !existsSync(p)) return { absent: `tokend does not run on this node (no control socket${p ? ` at ${p}` : ''})` };
    const control = createTokendControl(p, { timeoutMs });
    return { source: `tokend STATS on ${p}`, stats: () => control.stats() };
  };
}

function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let t: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (t = setTimeout(() => reject(new Error(`${what}: no answer in ${ms} ms`)), ms)));
  return Promise.race([p, late]).finally(() => clearTimeout(t));
}

async function readTokend(src: TokendSource, ms: number): Promise<TokendView> {
  if ('absent' in src) return tokendView(src.absent);
  try {
    return tokendView(src.source, await within(src.stats(), ms, 'tokend'));
  } catch (e) {
    return tokendView(src.source, undefined, (e as Error).message);
  }
}

/** The whole answer of `GET /system/nodes`; every source bounded, a failed one is a reason in the answer. */
export async function readNodes(s: NodesSources): Promise<NodesAnswer> {
  const ms = s.timeoutMs ?? 2500;
  const enforcement = s.enforcement();
  const [tokend, cluster] = await Promise.all([
    readTokend(s.tokend(), ms),
    'absent' in s.clusters ? Promise.resolve({ absent: s.clusters.absent })
      : within(s.clusters.nodes(), ms, s.clusters.source).then((nodes) => ({ nodes }), (e: Error) => ({ absent: `${e.message}` })),
  ]);
  const facts = 'nodes' in cluster ? cluster.nodes : [];
  const views = 'nodes' in cluster && !('absent' in s.clusters) ? clusterViews(facts, s.clusters.source) : noClusters((cluster as { absent: string }).absent);
  const nodes = [...(s.local ? [{ name: s.local.name, devices: s.local.devices, enforcement }] : []), ...clusterNodes(facts, enforcement)];
  return { at: new Date((s.now ?? Date.now)()).toISOString(), provider: s.provider(), nodes, tokend, ...views };
}

/** `GET /system/nodes` (behind `/system`'s auth and Origin guard): takes no parameters. */
export function nodesRoutes(s: NodesSources): Router {
  const r = Router();
  r.get('/system/nodes', async (req, res) => {
    const extra = Object.keys(req.query)[0];
    if (extra !== undefined) throw invalid(extra, `GET /system/nodes takes no query parameters (got "${extra}")`);
    res.set('Cache-Control', 'no-store').json(await readNodes(s));
  });
  return r;
}

/** The gateway's sources: the local provider's one node and its tokend, or a cluster's nodes (tokend runs on each, under its node agent). */
export function gatewayNodeSources(o: { provider: FunctionProvider; devices?: NodeDevices; controlPath?: () => string | undefined;
  clusterNodes?: () => Promise<ClusterNodeFacts[]>; }): NodesSources {
  const local = o.provider.info().orchestration === 'local';
  return {
    provider: () => o.provider.info().provider,
    enforcement: () => o.provider.enforcement(),
    ...(local ? { local: { name: hostname(), devices: o.devices ?? { cpuCores: cpus().length, gpus: [] } } } : {}),
    tokend: local && o.controlPath ? localTokend(o.controlPath)
      : () => ({ absent: local ? 'tokend is not configured on this node' : 'tokend runs on each node under its node agent; the gateway does not reach it' }),
    clusters: o.clusterNodes ? { source: 'Kubernetes API: nodes and their mlfaas.io/vc, mlfaas.io/home-vc labels', nodes: o.clusterNodes }
      : { absent: 'the local provider runs one node: no virtual clusters, nothing to loan' },
  };
}
