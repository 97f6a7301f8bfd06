import { seedEchoHttp } from '../helpers/images';
import { testGateway, testRedis } from '../helpers/platform';
import { describeProvider } from './describe-provider';

describeProvider('local', async () => {
  const redis = await testRedis();
  const platform = await testGateway(redis.url);
  seedEchoHttp(platform.images);
  return {
    provider: platform.gw.provider,
    async stop() {
      await platform.stop();
      await redis.stop();
    },
  };
});
