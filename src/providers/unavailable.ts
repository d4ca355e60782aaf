import { GatewayError } from '../errors.js';
import type { Provider } from './provider.js';

/**
 * Stands in for a provider type the config accepts but this build does not ship yet, so a config
 * written for the full gateway loads today and its requests get a clear 501.
 */
export function createUnavailableProvider(type: string): Provider {
  return {
    type,
    // An async generator throws on the first `next()`, before any event: the client gets a 501.
    streamText: async function* unavailableStreamText() {
      throw new GatewayError({
        status: 501,
        message: `The ${type} provider is not available in this build yet`,
        type: 'not_implemented',
        code: 'not_implemented',
      });
    },
  };
}
