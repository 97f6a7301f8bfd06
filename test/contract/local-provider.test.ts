import { cpus } from 'node:os';
import { createTokendControl } from '../../node-runtime/tokend-control';
import { cfsCoresOf } from '../helpers/host-enforcement';
import { seedEchoHttp } from '../helpers/images';
import { testGateway, testRedis } from '../helpers/platform';
import { describeProvider } from './describe-provider';

describeProvider('local', async () => {
  const redis = await testRedis();
  const platform = await testGateway(redis.url);
  seedEchoHttp(platform.images);
  const provider = platform.gw.provider;
  return {
    provider,
    async enforcedCpu(ref, replicaId) {
      const temporal = provider.enforcement().temporal;
      if (temporal === 'cfs') return cfsCoresOf(replicaId);
      if (temporal === 'tokend' && platform.gw.tokend) {
        // tokend's CPU device is every core; a client's limit is its fraction of them
        const pid = (await provider.endpoints(ref)).find((r) => r.id === replicaId)?.pid;
        const client = (await createTokendControl(platform.gw.tokend.controlPath).stats()).clients.find((c) => c.pid === pid);
        return client ? client.limit * cpus().length : undefined;
      }
      return undefined;
    },
    async stop() {
      await platform.stop();
      await redis.stop();
    },
  };
});
