import { createGateway, type Gateway } from '../../src/gateway.js';
import { type BedrockProviderOptions, createBedrockProvider } from '../../src/providers/bedrock/bedrock-provider.js';
import { BEDROCK_CREDENTIALS, BEDROCK_REGION, CLAUDE, type FakeBedrock, NOVA } from '../fakes/fake-bedrock.js';
import { serve } from '../helpers/serve.js';

type Json = Record<string, any>;

/** The provider options that sign as the fake expects. */
export const SIGNED_BY: BedrockProviderOptions = { region: BEDROCK_REGION, ...BEDROCK_CREDENTIALS };

export interface BedrockGateway {
  gateway: Gateway;
  /** The gateway's loopback address. */
  url: string;
  /** Stops the server and closes the provider. */
  close(): Promise<void>;
}

/**
 * A gateway on loopback whose `aws` provider is Bedrock at the fake (`options` besides the
 * address; by default signed as the fake expects), serving Nova as `nova` (Converse) and Claude
 * as `claude-bedrock` (invoke).
 */
export async function serveBedrockGateway(fake: FakeBedrock, options: BedrockProviderOptions = SIGNED_BY): Promise<BedrockGateway> {
  const gateway = createGateway({
    keys: [{ key: 'sk-test' }],
    providers: { aws: createBedrockProvider({ baseURL: fake.url, ...options }) },
    models: [
      { id: 'nova', provider: 'aws', upstreamModel: NOVA },
      { id: 'claude-bedrock', provider: 'aws', upstreamModel: CLAUDE },
    ],
    logger: false,
  });
  const served = await serve(gateway);
  return {
    gateway,
    url: served.url,
    async close() {
      await served.close();
      await Promise.all(Object.values(gateway.options.providers).map((provider) => provider.close?.()));
    },
  };
}

/** The tool calls and results a Converse body carries, by tool name (as `toolExchangeByName` for other wires). */
export function converseExchangeByName(body: Json): { calls: unknown[]; results: unknown[] } {
  const blocks: Json[] = body.messages.flatMap((message: Json) => message.content);
  const names = new Map<string, string>();
  const calls = blocks
    .filter((block) => block.toolUse)
    .map(({ toolUse }) => {
      names.set(toolUse.toolUseId, toolUse.name);
      return { name: toolUse.name, input: toolUse.input };
    });
  const results = blocks
    .filter((block) => block.toolResult)
    .map(({ toolResult }) => ({ name: names.get(toolResult.toolUseId), output: toolResult.content.map((part: Json) => part.text ?? '').join('') }));
  return { calls, results };
}
