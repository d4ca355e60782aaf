import { serve } from 'infergate/deno';
import { optionsFromEnv } from '../shared/catalog.ts';
import { buildApp } from './app.ts';

const { gateway, context } = buildApp(optionsFromEnv());
serve(gateway, {
  port: Number(process.env.PORT ?? 3000),
  hostname: '127.0.0.1',
  context,
  onListen: ({ port }) => console.log(`Deno example listening on http://127.0.0.1:${port} (gateway at /ai/v1, key sk-app-alice)`),
});
