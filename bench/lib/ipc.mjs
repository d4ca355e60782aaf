// Request/reply over the Node IPC channel between the runner and its child processes.

/**
 * In a child: answers `{ id, cmd, args }` messages with `{ id, result }` or `{ id, error }`.
 * @param {Record<string, (args: any) => unknown>} handlers
 */
export function serveIpc(handlers) {
  if (!process.send) throw new Error('this script is started by bench/run.mjs (it needs an IPC channel)');
  process.on('message', async (/** @type {any} */ message) => {
    if (!message || typeof message !== 'object' || message.id === undefined) return;
    const handler = handlers[message.cmd];
    try {
      if (!handler) throw new Error(`unknown command ${message.cmd}`);
      const result = await handler(message.args);
      process.send?.({ id: message.id, result });
    } catch (error) {
      process.send?.({ id: message.id, error: String(/** @type {Error} */ (error)?.stack ?? error) });
    }
  });
  // The runner going away ends the child.
  process.on('disconnect', () => process.exit(0));
}

/** Tells the runner the child is listening. @param {Record<string, unknown>} info */
export function announce(info) {
  process.send?.({ ready: true, ...info });
}

/**
 * In the runner: a function that sends a command to the child and resolves with its reply.
 * @param {import('node:child_process').ChildProcess} child
 * @param {number} [timeoutMs]
 */
export function ipcClient(child, timeoutMs = 30_000) {
  let next = 0;
  /** @type {Map<number, { resolve: (v: any) => void, reject: (e: Error) => void, timer: NodeJS.Timeout }>} */
  const waiting = new Map();
  child.on('message', (/** @type {any} */ message) => {
    const entry = message && waiting.get(message.id);
    if (!entry) return;
    waiting.delete(message.id);
    clearTimeout(entry.timer);
    if (message.error) entry.reject(new Error(message.error));
    else entry.resolve(message.result);
  });
  child.on('exit', () => {
    for (const [id, entry] of waiting) {
      clearTimeout(entry.timer);
      entry.reject(new Error('child exited'));
      waiting.delete(id);
    }
  });
  /** @param {string} cmd @param {unknown} [args] @returns {Promise<any>} */
  return (cmd, args) =>
    new Promise((resolve, reject) => {
      const id = next++;
      const timer = setTimeout(() => {
        waiting.delete(id);
        reject(new Error(`IPC ${cmd} timed out`));
      }, timeoutMs);
      waiting.set(id, { resolve, reject, timer });
      child.send({ id, cmd, args });
    });
}
