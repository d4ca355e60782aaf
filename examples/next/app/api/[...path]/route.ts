import { buildApp } from '../../../gateway.ts';
import { optionsFromEnv } from '../../../../shared/catalog.ts';

// Streams and per-request auth: never cache, always run on Node.js.
export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

export const { GET, POST, HEAD, OPTIONS, PUT, PATCH, DELETE } = buildApp(optionsFromEnv());
