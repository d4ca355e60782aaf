import type { Dispatcher } from 'undici';
import type { Provider } from '../providers/provider.js';
import { bedrockGuardrailChecker } from './adapters/bedrock-guardrail.js';
import { openAIModerationChecker } from './adapters/openai-moderation.js';
import { presidioChecker } from './adapters/presidio.js';
import type { GuardrailChecker } from './checker.js';
import { piiDetector } from './detectors/pii.js';
import { regexDetector } from './detectors/regex.js';
import { secretsDetector } from './detectors/secrets.js';
import { DEFAULT_TIMEOUT_MS, DEFAULT_WINDOW, type Guardrail, type GuardrailConfig } from './guardrail.js';

/** What building a guardrail needs: the gateway's providers, and the pool remote services share. */
export interface GuardrailDeps {
  readonly providers: Record<string, Provider>;
  /** One pooled dispatcher for the remote services the gateway calls itself (Presidio), closed with the gateway. */
  dispatcher(): Dispatcher;
}

/**
 * Builds each guardrail of a list; a later one of the same name replaces an earlier one. Throws a
 * `TypeError` naming `where` and the guardrail (an unknown provider, a mask on a checker that
 * only flags, an unsafe pattern).
 */
export function buildGuardrails(list: readonly GuardrailConfig[], deps: GuardrailDeps, where: string): Guardrail[] {
  if (!Array.isArray(list)) throw new TypeError(`${where} must be an array of guardrails`);
  const built = new Map<string, Guardrail>();
  list.forEach((config, index) => {
    const guardrail = buildGuardrail(config, deps, `${where}[${index}]`);
    built.set(guardrail.name, guardrail);
  });
  return [...built.values()];
}

function buildGuardrail(config: GuardrailConfig, deps: GuardrailDeps, where: string): Guardrail {
  if (!config || typeof config !== 'object') throw new TypeError(`${where} must be a guardrail object`);
  const checker = checkerOf(config, deps, where);
  const action = config.action ?? 'block';
  if (action === 'mask' && !checker.canMask)
    throw new TypeError(`${where}: a ${config.type} guardrail only flags whole texts, so it cannot mask; use "block" or "monitor"`);
  const phase = config.phase ?? 'both';
  return {
    name: config.name ?? config.type,
    action,
    input: phase !== 'output',
    output: phase !== 'input',
    timeoutMs: config.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    failOpen: config.failOpen ?? false,
    window: config.window ?? DEFAULT_WINDOW,
    checker,
  };
}

function checkerOf(config: GuardrailConfig, deps: GuardrailDeps, where: string): GuardrailChecker {
  const { providers } = deps;
  try {
    switch (config.type) {
      case 'secrets':
        return secretsDetector(config);
      case 'pii':
        return piiDetector(config);
      case 'regex':
        return regexDetector(config);
      case 'openai-moderation':
        return openAIModerationChecker(config, providerOf(config.provider, providers, 'moderate'));
      case 'bedrock-guardrail':
        return bedrockGuardrailChecker(config, providerOf(config.provider, providers, 'applyGuardrail'));
      case 'presidio':
        return presidioChecker(config, { dispatcher: deps.dispatcher() });
      case 'custom':
        if (typeof config.checker?.check !== 'function') throw new TypeError('a custom guardrail needs a `checker` with a `check` function');
        if (typeof config.name !== 'string' || config.name === '') throw new TypeError('a custom guardrail needs a `name`');
        return config.checker;
      default:
        throw new TypeError(`unknown guardrail type ${JSON.stringify((config as { type?: unknown }).type)}`);
    }
  } catch (error) {
    if (error instanceof TypeError) throw new TypeError(`${where}: ${error.message}`);
    throw error;
  }
}

function providerOf(name: string, providers: Record<string, Provider>, call: 'moderate' | 'applyGuardrail'): Provider {
  const provider = providers[name];
  if (!provider) throw new TypeError(`unknown provider "${name}"`);
  if (!provider.moderation?.[call])
    throw new TypeError(`provider "${name}" (${provider.type}) has no ${call === 'moderate' ? 'moderation endpoint' : 'ApplyGuardrail'}`);
  return provider;
}
