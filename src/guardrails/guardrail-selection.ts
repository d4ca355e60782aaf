import { GatewayError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { TextTurn } from '../plugins/text-stage.js';
import type { Provider } from '../providers/provider.js';
import type { ModelEntry } from '../routing/model.js';
import type { Agent } from 'undici';
import { setBounded } from '../bounded-map.js';
import { pooledAgent } from '../providers/http/upstream-client.js';
import { buildGuardrails, type GuardrailDeps } from './build-guardrails.js';
import type { Guardrail, GuardrailConfig, GuardrailPolicies } from './guardrail.js';
import type { GuardrailSelector } from './guardrail-stage.js';

const NONE: readonly Guardrail[] = [];
/** Distinct key guardrail lists kept built. */
const MAX_KEY_LISTS = 1_000;

/**
 * Which guardrails each turn meets: the gateway's, then its key group's, its model's and its
 * key's, a later one replacing an earlier one of the same name. The gateway's, the groups' and
 * the configured models' are built (and checked) at start; a key's, as its store gives them, on
 * first use of that record.
 */
export function guardrailSelector(
  policies: GuardrailPolicies | undefined,
  models: Iterable<ModelEntry>,
  providers: Record<string, Provider>,
  logger: Logger,
): GuardrailSelector & { close(): Promise<void> } {
  let agent: Agent | undefined;
  const deps: GuardrailDeps = { providers, dispatcher: () => (agent ??= pooledAgent(undefined)) };
  const global = buildGuardrails(policies?.guardrails ?? [], deps, 'policies.guardrails');
  const groups = new Map<string, Guardrail[]>();
  for (const [group, list] of Object.entries(policies?.groupGuardrails ?? {})) {
    groups.set(group, buildGuardrails(list, deps, `policies.groupGuardrails.${group}`));
  }
  // Keyed by the list: a wildcard entry's models share their entry's.
  const byModel = new WeakMap<readonly GuardrailConfig[], Guardrail[]>();
  const modelGuardrails = (model: ModelEntry): readonly Guardrail[] | undefined => {
    if (!model.guardrails?.length) return undefined;
    let built = byModel.get(model.guardrails);
    if (!built) {
      built = buildGuardrails(model.guardrails, deps, `models.${model.id}.guardrails`);
      byModel.set(model.guardrails, built);
    }
    return built;
  };
  for (const model of models) modelGuardrails(model);

  // A managed store gives a new record (and list) each time its cache refreshes: lists of plain
  // specs are kept by their JSON, so they are not rebuilt; a host's own checkers by the list.
  const bySpecs = new Map<string, Guardrail[]>();
  const byList = new WeakMap<readonly GuardrailConfig[], Guardrail[]>();
  const keyGuardrails = (turn: TextTurn): readonly Guardrail[] | undefined => {
    const list = turn.key.guardrails;
    if (!list?.length) return undefined;
    const specs = list.some((config) => config.type === 'custom') ? undefined : JSON.stringify(list);
    let built = specs === undefined ? byList.get(list) : bySpecs.get(specs);
    if (!built) {
      try {
        built = buildGuardrails(list, deps, `key ${turn.key.id} guardrails`);
      } catch (error) {
        // A key whose guardrails cannot run is refused, never served unguarded.
        logger.error('guardrails of a key cannot be built', { requestId: turn.requestId, keyId: turn.key.id, message: String(error) });
        throw new GatewayError({
          status: 503,
          type: 'api_error',
          code: 'guardrail_unavailable',
          message: "The key's guardrails cannot run; the request was refused.",
        });
      }
      if (specs === undefined) byList.set(list, built);
      else setBounded(bySpecs, specs, built, MAX_KEY_LISTS);
    }
    return built;
  };

  const select = (turn: TextTurn): readonly Guardrail[] => {
    const group = groups.get(turn.key.group ?? 'default');
    const model = modelGuardrails(turn.model);
    const key = keyGuardrails(turn);
    if (!group && !model && !key) return global.length > 0 ? global : NONE;
    const merged = new Map<string, Guardrail>();
    for (const list of [global, group, model, key]) for (const guardrail of list ?? NONE) merged.set(guardrail.name, guardrail);
    return [...merged.values()];
  };
  return Object.assign(select, { close: async () => agent?.close() });
}
