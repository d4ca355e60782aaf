export { createGateway, type Gateway } from './gateway.js';
export type { GatewayPlugin, AuthenticatedPayload } from './plugins/plugin.js';
export type { AnswerTransform, TextStage, TextTurn } from './plugins/text-stage.js';
export type { CheckContext, GuardrailAction, GuardrailChecker, GuardrailFinding, GuardrailOutcome, GuardrailPhase, TextVerdict } from './guardrails/checker.js';
export type { CustomGuardrail, GuardrailConfig } from './guardrails/guardrail.js';
export type { GuardrailSpec } from './guardrails/guardrail-schema.js';
export { secretsDetector, SECRET_CATEGORIES } from './guardrails/detectors/secrets.js';
export { piiDetector, PII_CATEGORIES } from './guardrails/detectors/pii.js';
export { regexDetector } from './guardrails/detectors/regex.js';
export { maskText } from './guardrails/mask.js';
export type {
  GatewayOptions,
  GatewayHooks,
  GatewayLimits,
  UsageEvent,
  RequestHookPayload,
  ResponseHookPayload,
  MeterProviderLike,
} from './options.js';
export type { Logger } from './logger.js';
export { GatewayError, type GatewayErrorInit } from './errors.js';
export { StaticKeyStore, type KeyStore, type KeyRecord, type KeyLookupContext, type StaticKey } from './auth/key-store.js';
export { MemoryKeyStore, type MemoryKeyStoreOptions } from './admin/keys/memory-key-store.js';
export {
  KeyRevokedError,
  recordOf,
  type ManagedKeyStore,
  type ManagedKey,
  type KeySettings,
  type KeyPatch,
  type IssuedKey,
  type Actor,
  type AuditAction,
  type AuditEntry,
  type Page,
  type PageRequest,
} from './admin/keys/managed-key-store.js';
export type { ModelEntry, ModelKind } from './routing/model.js';
export type {
  Provider,
  FlatProvider,
  TextCapability,
  ImageCapability,
  SpeechCapability,
  VideoCapability,
  EmbeddingCapability,
  TranscriptionCapability,
  CallContext,
  PassthroughRequest,
  UpstreamReply,
} from './providers/provider.js';
export { createLocalProvider, localModels, type LocalProviderOptions } from './providers/local/local-provider.js';
export { MemoryTaskStore, type TaskStore, type VideoTaskRecord, type TaskStatus } from './tasks/task-store.js';
export type { VideoPollerOptions } from './options.js';
export type * from './protocols/ir.js';
export { createOpenAIProvider, type OpenAIProviderOptions } from './providers/openai/openai-provider.js';
export { createArkProvider, type ArkProviderOptions, type ArkSpeechOptions } from './providers/ark/ark-provider.js';
export type * from './providers/media.js';
export type { TranscriptionFields, TranscriptionFormat } from './schemas/transcription.js';
export { dimensionsUnsupported, embeddingInputs, textInputs } from './providers/embedding-inputs.js';
export { createAnthropicProvider, type AnthropicProviderOptions } from './providers/anthropic/anthropic-provider.js';
export { createGeminiProvider, type GeminiProviderOptions } from './providers/gemini/gemini-provider.js';
export { createVertexProvider, type VertexProviderOptions } from './providers/vertex/vertex-provider.js';
export type { ServiceAccountKey } from './providers/vertex/service-account.js';
export { createAzureProvider, type AzureProviderOptions } from './providers/azure/azure-provider.js';
export { createBedrockProvider, type BedrockGuardrail, type BedrockProviderOptions } from './providers/bedrock/bedrock-provider.js';
export type { AwsCredentials, AwsCredentialSource } from './providers/bedrock/sigv4.js';
export type { EntraCredentials } from './providers/azure/entra-tokens.js';
export type { UpstreamTimeouts } from './providers/http/upstream-client.js';
export type { AttemptEvent, RequestObserver, EventError, RefusalEvent, RefusalReason } from './policy/events.js';
export type { McpToolCallEvent } from './mcp/tool-call-event.js';
export type { McpCallOutcome, McpToolCall } from './mcp/tool-call.js';
export type { PolicyOptions, RoutingPolicy } from './policy/policy-options.js';
export type { HealthBus, HealthNotice } from './policy/health-bus.js';
export { MemoryHealthBus } from './policy/memory-health-bus.js';
export type { DeploymentHealthEntry } from './policy/deployment-health.js';
export type { BreakerState } from './policy/circuit-breaker.js';
export type { RetryPolicy } from './policy/fallback.js';
export type { KeyLimits, LimitEngine, LimitEngineOptions, AdmitResult, BudgetCheck, CounterState, Settlement } from './policy/limit-engine.js';
export type { Budget, BudgetPeriod, BudgetAccount, BudgetState } from './policy/budget.js';
export type { UnpricedModels } from './policy/budget-policy.js';
export { MemoryLimitEngine } from './policy/memory-limit-engine.js';
export type { DeploymentEntry } from './routing/model.js';
export type { ModelConfig } from './routing/model.js';
export { MemoryResponseStore } from './state/memory-response-store.js';
export type { ResponseStore, StoredResponse } from './state/response-store.js';
export { MemoryCacheStore, type MemoryCacheStoreOptions } from './cache/memory-cache-store.js';
export type { ResponseCacheStore } from './cache/cache-store.js';
export type { ResponseCacheOptions } from './cache/response-cache-options.js';
export { MemoryUsageStore, type UsageStore, type UsageRow, type UsageTotals } from './state/usage-store.js';
export type { ModelPrice } from './pricing/model-price.js';
export {
  rowOf,
  type RequestLog,
  type RequestLogRow,
  type RequestLogSink,
  type RequestLogReader,
  type SinkStats,
  type LogQuery,
  type LogPage,
  type StatsQuery,
  type Stats,
  type StatsPoint,
} from './logs/request-log.js';
export { MemoryRequestLog, type MemoryRequestLogOptions } from './logs/memory-request-log.js';
export type { McpOptions, McpServerConfig, McpHttpServerConfig, McpStdioServerConfig, McpOAuthClientCredentials } from './mcp/mcp-options.js';
export {
  MemoryMcpSessionStore,
  type MemoryMcpSessionStoreOptions,
  type McpSessionStore,
  type McpSessionRecord,
  type UpstreamState,
} from './mcp/session-store.js';
export { InvalidCursorError } from './logs/log-cursor.js';
export { MAX_STATS_BUCKETS } from './logs/stats-series.js';
export { createAdminHandler, type AdminHandler, type AdminHandlerOptions } from './admin/admin-handler.js';
export type { AdminAuthorize } from './admin/admin-auth.js';
