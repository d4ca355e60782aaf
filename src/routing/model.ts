import type { GuardrailConfig } from '../guardrails/guardrail.js';
import type { ModelPrice } from '../pricing/model-price.js';

export type ModelKind = 'text' | 'image' | 'video' | 'speech' | 'embedding' | 'transcription';

/** A public model: what clients name, and where the gateway sends it. */
export interface ModelEntry {
  /** Public id clients send as `model`. */
  id: string;
  /** Name of a provider in the gateway's `providers`. */
  provider: string;
  /** Model id sent upstream. Default: `id`. */
  upstreamModel?: string | undefined;
  /**
   * Several upstreams serving this model, chosen by weight, with fallback between them. When
   * set, `provider` and `upstreamModel` are only the defaults of its entries.
   */
  deployments?: readonly DeploymentEntry[] | undefined;
  /** Which endpoints serve it. Default `text`. */
  kind?: ModelKind | undefined;
  /** Per-family rules of the spec (section 4 rule 4): `gpt-image`, `seedream`. */
  family?: string | undefined;
  /** Groups allowed to use it. Default: every group. */
  groups?: readonly string[] | undefined;
  /** `owned_by` in the models listing. Default: the provider name. */
  ownedBy?: string | undefined;
  /**
   * Whether the model accepts `previous_response_id`. Default false: the spec's current models
   * reject it, so the gateway answers 400 before any upstream call.
   */
  previousResponseId?: boolean | undefined;
  /** Whether the model accepts `service_tier: "auto"`. Default false (400, as the spec says). */
  serviceTierAuto?: boolean | undefined;
  /**
   * Whether a Responses client's `conversation` (an upstream conversation object, `conv_…`) may
   * reach a Responses upstream on passthrough. Default false (400): conversation objects live in
   * the operator's upstream account, where any key could name any of them, whoever made it.
   */
  upstreamConversations?: boolean | undefined;
  /**
   * Whether the upstream model takes reasoning options (effort, thinking budget) translated from
   * another protocol. Default: true, except for names known not to reason (`gpt-4*`, `claude-3-5*`…).
   */
  reasoning?: boolean | undefined;
  /**
   * On a translated path, refuse (400) a sampling hint the upstream lacks (`topK` to OpenAI, a
   * penalty to Claude) instead of dropping it and naming it in `x-infergate-dropped-params`
   * (docs/providers.md). Default false; a key's `strictParams` wins.
   */
  strictParams?: boolean | undefined;
  /** This model's guardrails, after the gateway's and the key group's (docs/policies.md, "Guardrails"). */
  guardrails?: readonly GuardrailConfig[] | undefined;
  /**
   * Longest wait for a deployment's first byte (a stream's first event, a whole JSON answer), in
   * ms: past it the attempt is cancelled and counted as a failure of the deployment, and the next
   * one is tried (a 504 `upstream_first_byte_timeout` when none is left). 0: none. Default: the
   * retry policy's `firstByteTimeoutMs` (none unless set).
   */
  firstByteTimeoutMs?: number | undefined;
  /**
   * Answer repeated requests from the response cache (when the gateway has `responseCache`):
   * `true` for requests at temperature 0, `{ allowSampling: true }` for any temperature; `false`
   * or unset: only for keys with `cache: true` or requests with `x-infergate-cache: on`.
   */
  cache?: boolean | { allowSampling?: boolean | undefined } | undefined;
  /**
   * Dollars per million tokens (`input`, `output`, `cacheRead`, `cacheWrite`, `reasoning`) and per
   * unit (`image`, `videoSecond`, `speechCharacter`, `audioSecond`). Set, it is the model's whole
   * price; unset, the price catalog's (genai-prices) is used.
   */
  price?: ModelPrice | undefined;
}

/** A model as configured: with `deployments`, `provider` may be left out. */
export type ModelConfig = Omit<ModelEntry, 'provider'> & { provider?: string | undefined };

/** One upstream that can serve a public model: a provider and the model id it knows. */
export interface DeploymentEntry {
  /** Name of a provider in the gateway's `providers`. */
  provider: string;
  /** Model id sent upstream. Default: the model's `upstreamModel`, else its `id`. */
  upstreamModel?: string | undefined;
  /** Share of traffic relative to the other deployments. Default 1. */
  weight?: number | undefined;
  /** Stable name in events, cooldown state and sticky hashing. Default `provider/upstreamModel`. */
  id?: string | undefined;
}
