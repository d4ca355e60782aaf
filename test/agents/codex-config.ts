/**
 * Codex's `config.toml` with the gateway as its model provider, the way a user configures it;
 * without retries, so a failing run stops at the gateway's first error instead of backing off
 * until the timeout. `webSockets`: the provider's `supports_websockets` (Codex then opens a
 * WebSocket to `/v1/responses` first, and uses HTTP on the gateway's 426).
 */
export function codexConfigToml(model: string, gatewayUrl: string, webSockets = false): string {
  return [
    `model = "${model}"`,
    'model_provider = "infergate"',
    '',
    '[model_providers.infergate]',
    'name = "infergate"',
    `base_url = "${gatewayUrl}/v1"`,
    'env_key = "INFERGATE_API_KEY"',
    'wire_api = "responses"',
    'request_max_retries = 0',
    'stream_max_retries = 0',
    ...(webSockets ? ['supports_websockets = true'] : []),
    '',
  ].join('\n');
}
