import type { Logger } from '../../src/logger.js';

export interface LogLine {
  level: string;
  message: string;
  fields?: Record<string, unknown>;
}

/** A logger that keeps its lines, for tests that read what the gateway logged. */
export function recordingLogger(): { logger: Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const write = (level: string) => (message: string, fields?: Record<string, unknown>) => void lines.push({ level, message, ...(fields ? { fields } : {}) });
  return { lines, logger: { info: write('info'), warn: write('warn'), error: write('error') } };
}
