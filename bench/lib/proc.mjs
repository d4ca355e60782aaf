// What the runner reads of a process from /proc: CPU time (all threads) and resident memory.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

let clockTicks = 100;
try {
  clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
} catch {
  // keep 100
}

/** CPU time used so far by a process (user + system, every thread), in microseconds. @param {number} pid */
export function cpuMicros(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces), which ends with ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  return ((utime + stime) * 1e6) / clockTicks;
}

/** Resident set size, in bytes. @param {number} pid */
export function rssBytes(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = /VmRSS:\s+(\d+) kB/.exec(status);
  return match ? Number(match[1]) * 1024 : NaN;
}

/** This process's own CPU time in microseconds (precise). */
export function selfCpuMicros() {
  const usage = process.cpuUsage();
  return usage.user + usage.system;
}

/**
 * Measures CPU of some processes across an async piece of work.
 * @template T
 * @param {Record<string, number | undefined>} pids name → pid (`self` for this process)
 * @param {() => Promise<T>} work
 * @returns {Promise<{ result: T, cpu: Record<string, number>, elapsedMs: number }>}
 */
export async function withCpu(pids, work) {
  const read = () =>
    Object.fromEntries(
      Object.entries(pids)
        .filter(([, pid]) => pid !== undefined)
        .map(([name, pid]) => [name, name === 'self' ? selfCpuMicros() : cpuMicros(/** @type {number} */ (pid))]),
    );
  const before = read();
  const started = performance.now();
  const result = await work();
  const elapsedMs = performance.now() - started;
  const after = read();
  /** @type {Record<string, number>} */
  const cpu = {};
  for (const name of Object.keys(before)) cpu[name] = /** @type {number} */ (after[name]) - /** @type {number} */ (before[name]);
  return { result, cpu, elapsedMs };
}

/**
 * Scheduler times of a process's main thread (its event loop), in ms: on a CPU, and runnable but
 * waiting for one, which is time the machine's other work took from it.
 * @param {number} pid
 */
export function schedMillis(pid) {
  const [onCpu = 'NaN', waiting = 'NaN'] = readFileSync(`/proc/${pid}/schedstat`, 'utf8').trim().split(' ');
  return { onCpuMs: Number(onCpu) / 1e6, waitingMs: Number(waiting) / 1e6 };
}
