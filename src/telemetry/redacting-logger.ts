import type { Logger } from '../logger.js';
import { redactFields, scrubSecrets } from './redact.js';

export interface RedactingLoggerOptions {
  /** Redact secrets and prompts from every record. Default true; `false` hands `logger` back unchanged. */
  redact?: boolean;
}

/**
 * `logger` with every record passed through `redactFields` first, so no code path (ours, a
 * provider's, a hook's) can put a key or a prompt in a log line by naming a field carelessly.
 */
export function redactingLogger(logger: Logger, options: RedactingLoggerOptions = {}): Logger {
  if (options.redact === false) return logger;
  return {
    info: (message, fields) => logger.info(scrubSecrets(message), fields && redactFields(fields)),
    warn: (message, fields) => logger.warn(scrubSecrets(message), fields && redactFields(fields)),
    error: (message, fields) => logger.error(scrubSecrets(message), fields && redactFields(fields)),
  };
}
