import { listen } from 'infergate/node';
import { optionsFromEnv } from '../shared/catalog.ts';
import { buildApp } from './app.ts';

const { gateway, context } = buildApp(optionsFromEnv());
const server = await listen(gateway, { port: Number(process.env.PORT ?? 3000), context });
console.log(`node:http example listening on ${server.url} (gateway at /ai/v1, key sk-app-alice)`);
process.once('SIGINT', () => void server.close());
