import { listen } from 'infergate/node';
import { buildApp } from '../../examples/node/app.ts';
import { transportSuite } from './suite.js';

transportSuite({
  name: 'node:http',
  async start(options) {
    const { gateway, context } = buildApp(options);
    const server = await listen(gateway, { port: 0, context });
    return { origin: server.url, mount: '/ai', close: server.close };
  },
});
