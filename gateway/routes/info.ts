import { Router } from 'express';
import { notFound, PlatformError, ErrorCode } from '../errors';
import { checkDnsLabel } from '../lib/names';
import type { FunctionProvider } from '../providers/function-provider';

/** `/system/info` (OpenFaaS GatewayInfo) and the namespace endpoints. */
export function infoRoutes(provider: FunctionProvider, version: { release: string; sha: string }, extra: Record<string, unknown> = {}): Router {
  const r = Router();
  r.get('/system/info', (_req, res) => {
    res.json({ provider: provider.info(), version, arch: process.arch === 'x64' ? 'x86_64' : process.arch, ...extra });
  });
  r.get('/system/namespaces', async (_req, res) => {
    res.json(await provider.namespaces());
  });
  r.get('/system/namespace/:ns', async (req, res) => {
    const ns = checkDnsLabel(req.params.ns, 'namespace');
    if (!(await provider.namespaces()).includes(ns)) throw notFound(`namespace ${ns} not found`);
    res.json({ name: ns, labels: {}, annotations: {} });
  });
  const unsupported = () => {
    throw new PlatformError(ErrorCode.NotImplemented, 'namespaces are created implicitly by deploying into them with the local provider');
  };
  r.post('/system/namespace/:ns?', unsupported);
  r.put('/system/namespace/:ns', unsupported);
  r.delete('/system/namespace/:ns', unsupported);
  return r;
}
