import { serve } from 'infergate/bun';
import { optionsFromEnv } from '../shared/catalog.ts';
import { buildApp } from './app.ts';

const { gateway, context } = buildApp(optionsFromEnv());
const server = serve(gateway, { port: Number(process.env.PORT ?? 3000), hostname: '127.0.0.1', context });
console.log(`Bun example listening on http://127.0.0.1:${server.port} (gateway at /ai/v1, key sk-app-alice)`);
