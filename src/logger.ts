/** Where the gateway writes what it has to say; keys and prompts never reach it. */
export interface Logger {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/** `logger: false`. */
export const silentLogger: Logger = { info() {}, warn() {}, error() {} };

/** The default: JSON lines on stderr. */
export const jsonLogger: Logger = {
  info: (message, fields) => writeLog('info', message, fields),
  warn: (message, fields) => writeLog('warn', message, fields),
  error: (message, fields) => writeLog('error', message, fields),
};

function writeLog(level: string, message: string, fields?: Record<string, unknown>): void {
  process.stderr.write(JSON.stringify({ level, time: new Date().toISOString(), message, ...fields }) + '\n');
}
