import { buildApp } from '../../examples/fastify/app.ts';
import { fastifyHost } from './node-server.js';
import { transportSuite } from './suite.js';

transportSuite({
  name: 'Fastify',
  async start(options) {
    const app = buildApp(options);
    return fastifyHost(app, await app.listen({ port: 0, host: '127.0.0.1' }), '/ai');
  },
});
