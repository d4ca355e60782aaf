import { optionsFromEnv } from '../shared/catalog.ts';
import { buildApp } from './app.ts';

const app = buildApp(optionsFromEnv());
const url = await app.listen({ port: Number(process.env.PORT ?? 3000), host: '127.0.0.1' });
console.log(`Fastify example listening on ${url} (gateway at /ai/v1, key sk-app-alice)`);
