import { GatewayError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { TextTurn } from '../plugins/text-stage.js';
import type { Provider } from '../providers/provider.js';
import type { ModelEntry } from '../routing/model.js';
import { buildGuardrails } from './build-guardrails.js';
import type { Guardrail, GuardrailConfig, GuardrailPolicies } from './guardrail.js';
import type { GuardrailSelector } from './guardrail-stage.js';

const NONE: readonly Guardrail[] = [];

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
): GuardrailSelector {
  const global = buildGuardrails(policies?.guardrails ?? [], providers, 'policies.guardrails');
  const groups = new Map<string, Guardrail[]>();
  for (const [group, list] of Object.entries(policies?.groupGuardrails ?? {})) {
    groups.set(group, buildGuardrails(list, providers, `policies.groupGuardrails.${group}`));
  }
  // Keyed by the list: a wildcard entry's models share their entry's.
  const byModel = new WeakMap<readonly GuardrailConfig[], Guardrail[]>();
  const modelGuardrails = (model: ModelEntry): readonly Guardrail[] | undefined => {
    if (!model.guardrails?.length) return undefined;
    let built = byModel.get(model.guardrails);
    if (!built) {
      built = buildGuardrails(model.guardrails, providers, `models.${model.id}.guardrails`);
      byModel.set(model.guardrails, built);
    }
    return built;
  };
  for (const model of models) modelGuardrails(model);

  const byKey = new WeakMap<readonly GuardrailConfig[], Guardrail[]>();
  const keyGuardrails = (turn: TextTurn): readonly Guardrail[] | undefined => {
    const list = turn.key.guardrails;
    if (!list?.length) return undefined;
    let built = byKey.get(list);
    if (!built) {
      try {
        built = buildGuardrails(list, providers, `key ${turn.key.id} guardrails`);
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
      byKey.set(list, built);
    }
    return built;
  };

  return (turn) => {
    const group = groups.get(turn.key.group ?? 'default');
    const model = modelGuardrails(turn.model);
    const key = keyGuardrails(turn);
    if (!group && !model && !key) return global.length > 0 ? global : NONE;
    const merged = new Map<string, Guardrail>();
    for (const list of [global, group, model, key]) for (const guardrail of list ?? NONE) merged.set(guardrail.name, guardrail);
    return [...merged.values()];
  };
}
