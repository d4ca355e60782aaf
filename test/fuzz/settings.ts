/**
 * What the fuzzed gateway is configured with, shared by the child server and the harness (the
 * oversize cases are built from these limits).
 */
export const FUZZ_KEY = 'sk-fuzz';
/** A second caller: its video task and stored response must be invisible to the first. */
export const OTHER_KEY = 'sk-fuzz-other';

/** Small limits, so the 413 cases cost kilobytes instead of the default megabytes. */
export const FUZZ_LIMITS = {
  jsonBodyBytes: 512 * 1024,
  uploadFileBytes: 64 * 1024,
  uploadFiles: 4,
};

/** A video model whose tasks stay queued: its content download answers 409. */
export const SLOW_VIDEO_MODEL = 'slow-video';

/** A text model whose responses the gateway stores (`previousResponseId`), for the stored-response routes. */
export const STATEFUL_MODEL = 'local-state';

/** A case that takes longer than this to answer (or to finish its stream) is a hang. */
export const CASE_DEADLINE_MS = 5_000;

/** Tags each request with its case number, so that the gateway's log lines can be traced to their case. */
export const CASE_HEADER = 'x-fuzz-case';

/**
 * The protocol version of the fuzzer's MCP sessions: 2025-03-26, the last with JSON-RPC batches,
 * so that a body wrapped in `[...]` reaches the SDK as a batch instead of being refused at once.
 */
export const MCP_FUZZ_VERSION = '2025-03-26';
