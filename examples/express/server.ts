import type { AddressInfo } from 'node:net';
import { optionsFromEnv } from '../shared/catalog.ts';
import { buildApp } from './app.ts';

const server = buildApp(optionsFromEnv()).listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  console.log(`Express example listening on http://127.0.0.1:${port} (gateway at /ai/v1, key sk-app-alice)`);
});
