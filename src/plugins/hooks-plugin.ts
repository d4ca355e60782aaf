import type { GatewayHooks } from '../options.js';
import type { GatewayPlugin } from './plugin.js';

/** The `hooks` option as a plugin: each hook is the stage of the same moment. */
export function hooksPlugin(hooks: GatewayHooks): GatewayPlugin {
  const { onRequest, onResponse, onUsage, onAttempt, onToolCall } = hooks;
  return {
    ...(onRequest ? { onGatewayRequest: onRequest } : {}),
    ...(onResponse ? { onGatewayResponse: onResponse } : {}),
    // The hook takes the event alone, as it always has.
    ...(onUsage ? { onUsage: (event) => onUsage(event) } : {}),
    ...(onAttempt ? { onAttempt } : {}),
    ...(onToolCall ? { onToolCall: (event) => onToolCall(event) } : {}),
  };
}
