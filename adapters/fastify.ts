import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { Gateway } from '../src/gateway.js';
import { hostNodeRequest } from '../src/http/host-request.js';

export interface FastifyGatewayOptions {
  gateway: Gateway;
}

/** What hooks and a custom `KeyStore` receive as `serverContext` under Fastify. */
export type FastifyContext = {
  /** Fastify's request: what the host's hooks decorated it with (`request.user`…) is there. */
  request: FastifyRequest;
  reply: FastifyReply;
  req: IncomingMessage;
  res: ServerResponse;
};

/**
 * The gateway as a Fastify plugin, below the prefix it is registered with:
 * `app.register(fastifyPlugin, { gateway, prefix: '/ai' })` answers `/ai/v1/chat/completions`.
 * Inside the plugin (and only there: it is encapsulated on purpose) bodies are left unread for
 * the gateway, multipart included, and the answer is streamed through Fastify's `reply`.
 */
export const fastifyPlugin: FastifyPluginAsync<FastifyGatewayOptions> = async function infergatePlugin(fastify, { gateway }) {
  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser('*', (_request, _payload, done) => done(null));
  const prefix = fastify.prefix;

  async function infergateFastify(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const below = request.url.slice(prefix.length);
    const nodeRequest = hostNodeRequest(request.raw, below.startsWith('/') ? below : `/${below}`);
    const context: FastifyContext = { request, reply, req: request.raw, res: reply.raw };
    return reply.send(await gateway.handleNodeRequestAndResponse(nodeRequest, reply.raw, context));
  }
  fastify.all('/', infergateFastify);
  fastify.all('/*', infergateFastify);
};
