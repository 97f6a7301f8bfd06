import { Router } from 'express';
import { invalid } from '../errors';
import type { FunctionProvider } from '../providers/function-provider';
import { parseSecret } from '../registry/secrets';
import { namespaceOf } from './functions';

/** `/system/secrets`: faas-cli secret create (201, 409 if it exists), list, update (200), remove (200). */
export function secretRoutes(provider: FunctionProvider): Router {
  const r = Router();
  r.get('/system/secrets', async (req, res) => {
    res.json(await provider.secrets.list(namespaceOf(req.query.namespace)));
  });
  r.post('/system/secrets', async (req, res) => {
    await provider.secrets.create(parseSecret(req.body, namespaceOf(req.query.namespace), true));
    res.status(201).end();
  });
  r.put('/system/secrets', async (req, res) => {
    await provider.secrets.update(parseSecret(req.body, namespaceOf(req.query.namespace), true));
    res.status(200).end();
  });
  r.delete('/system/secrets', async (req, res) => {
    const s = parseSecret(req.body, namespaceOf(req.query.namespace), false);
    if (s.value !== undefined) throw invalid('value', 'must not be sent when removing a secret');
    await provider.secrets.remove(s.name, s.namespace);
    res.status(200).end();
  });
  return r;
}
