import type { FuzzCase, RouteName } from './cases.js';
import type { GatewayProcess, LogLine } from './child.js';
import { materialize, type PreparedIds } from './materialize.js';
import { judge, judgeLogs } from './oracle.js';
import { CASE_DEADLINE_MS, CASE_HEADER, FUZZ_KEY, MCP_FUZZ_VERSION, OTHER_KEY, SLOW_VIDEO_MODEL, STATEFUL_MODEL } from './settings.js';
import { sendRaw, type WireOutcome } from './wire.js';

export type CaseSource = 'corpus' | 'generated';

const SLOWEST_KEPT = 5;
/** How long a log line about a finished case may still take to arrive. */
const LATE_LOG_WAIT_MS = 200;
/** How long a failed case waits for the log line that explains it. */
const FAILURE_LOG_WAIT_MS = 50;

/** A failure log line that came after its case was judged; `testCase` undefined when it names none. */
export interface LateProblem {
  testCase: FuzzCase | undefined;
  problem: string;
}

/**
 * Runs cases against the child gateway one at a time, judges each, and keeps the tally the run
 * reports at the end. After a crash the child is restarted (and its video tasks and stored
 * responses made again), so one crash does not hide the rest of the run.
 */
export class FuzzRunner {
  private ids: PreparedIds = { completed: '', queued: '', foreign: '', response: '', foreignResponse: '', mcpSession: '', foreignMcpSession: '' };
  /** Every case run so far, by number (the `x-fuzz-case` tag), for late log lines to name. */
  private readonly casesByNumber: FuzzCase[] = [];
  readonly counts = new Map<CaseSource, Map<RouteName, number>>([
    ['corpus', new Map()],
    ['generated', new Map()],
  ]);
  /** Outcomes: an HTTP status, or `closed` / `timeout` when no answer came. */
  readonly statuses = new Map<number | string, number>();
  /** Failure logs that arrived after their case had been judged, with that case. */
  private readonly lateProblems: LateProblem[] = [];
  /** The slowest cases, slowest first: where the time budget goes. */
  readonly slowest: { name: string; ms: number }[] = [];

  constructor(private readonly gateway: GatewayProcess) {}

  async prepare(): Promise<void> {
    this.ids = { ...(await createTasks(this.gateway.url)), ...(await createResponses(this.gateway.url)), ...(await createMcpSessions(this.gateway.url)) };
  }

  /** Runs one case; what the oracle found wrong, or nothing. */
  async run(testCase: FuzzCase, source: CaseSource): Promise<string[]> {
    if (!this.gateway.alive) {
      await this.gateway.restart();
      await this.prepare();
    }
    const number = this.casesByNumber.push(testCase) - 1;
    const request = materialize(testCase, this.ids);
    const outcome = await sendRaw(this.gateway.url, { ...request, headers: [...request.headers, [CASE_HEADER, String(number)]] }, CASE_DEADLINE_MS);
    // A dropped connection may be the child dying: give it a moment to be seen as such.
    if (outcome.kind !== 'response') await this.gateway.exitWithin(300);
    // Log lines written just before the answer may still be in the pipe: a failed answer comes
    // with one, so it waits for it; other cases only let pending lines in (late ones are caught
    // by `lateFailures`).
    const failed = outcome.kind !== 'response' || outcome.response.status >= 500;
    await new Promise((resolve) => (failed ? setTimeout(resolve, FAILURE_LOG_WAIT_MS) : setImmediate(resolve)));
    const logs = this.ownLogs(number);
    const crashed = this.gateway.alive ? undefined : this.gateway.exitReason;
    const problems = judge(testCase, outcome, logs, crashed, request);
    this.tally(testCase, source, outcome);
    // A DELETE may have removed a stored response or ended the MCP session: the next cases get fresh ones.
    if (request.method.toUpperCase() === 'DELETE' && this.gateway.alive) {
      Object.assign(this.ids, await createResponses(this.gateway.url), await createMcpSessions(this.gateway.url));
    }
    return problems;
  }

  /**
   * Waits for log lines still in the pipe, then hands over (and forgets) the late problems: lines
   * about a case written after its answer had been judged. Called at the end of each test.
   */
  async lateFailures(): Promise<LateProblem[]> {
    await new Promise((resolve) => setTimeout(resolve, LATE_LOG_WAIT_MS));
    for (const problem of judgeLogs(this.ownLogs(-1))) this.lateProblems.push({ testCase: undefined, problem });
    return this.lateProblems.splice(0);
  }

  total(source: CaseSource): number {
    let sum = 0;
    for (const count of this.counts.get(source)!.values()) sum += count;
    return sum;
  }

  /**
   * This case's log lines (and lines tied to no case, like a crash); a line about an earlier case
   * is kept as a late problem of that case, with the case to replay it.
   */
  private ownLogs(number: number): LogLine[] {
    const own: LogLine[] = [];
    for (const line of this.gateway.takeLogs()) {
      const tagged = typeof line.fuzzCase === 'string' ? Number(line.fuzzCase) : number;
      if (tagged === number) {
        own.push(line);
        continue;
      }
      for (const problem of judgeLogs([line])) this.lateProblems.push({ testCase: this.casesByNumber[tagged], problem });
    }
    return own;
  }

  private tally(testCase: FuzzCase, source: CaseSource, outcome: WireOutcome): void {
    const counts = this.counts.get(source)!;
    counts.set(testCase.route, (counts.get(testCase.route) ?? 0) + 1);
    const status = outcome.kind === 'response' ? outcome.response.status : outcome.kind;
    this.statuses.set(status, (this.statuses.get(status) ?? 0) + 1);
    if (this.slowest.length < SLOWEST_KEPT || outcome.elapsedMs > this.slowest.at(-1)!.ms) {
      this.slowest.push({ name: testCase.name.length > 120 ? `${testCase.name.slice(0, 120)}…` : testCase.name, ms: outcome.elapsedMs });
      this.slowest.sort((a, b) => b.ms - a.ms);
      this.slowest.length = Math.min(this.slowest.length, SLOWEST_KEPT);
    }
  }
}

/** POSTs a JSON body as `key` and answers the `id` of what it made. */
async function createdId(origin: string, target: string, key: string, json: Record<string, unknown>): Promise<string> {
  const body = Buffer.from(JSON.stringify(json));
  const outcome = await sendRaw(
    origin,
    {
      method: 'POST',
      target,
      headers: [
        ['host', '127.0.0.1'],
        ['authorization', `Bearer ${key}`],
        ['content-type', 'application/json'],
        ['content-length', String(body.byteLength)],
      ],
      body,
    },
    CASE_DEADLINE_MS,
  );
  if (outcome.kind !== 'response' || outcome.response.status !== 200) throw new Error(`could not POST ${target}: ${JSON.stringify(outcome).slice(0, 500)}`);
  return (JSON.parse(outcome.response.body.toString('utf8')) as { id: string }).id;
}

/**
 * Stored responses the stored-response cases read: the caller's, the second of a conversation
 * (so it has several input items to page through), and another key's.
 */
async function createResponses(origin: string): Promise<Pick<PreparedIds, 'response' | 'foreignResponse'>> {
  const first = await createdId(origin, '/v1/responses', FUZZ_KEY, { model: STATEFUL_MODEL, input: 'My name is Ada.' });
  const input = [
    { role: 'user', content: 'What is my name?' },
    { role: 'user', content: 'Answer in one word.' },
  ];
  const response = await createdId(origin, '/v1/responses', FUZZ_KEY, { model: STATEFUL_MODEL, previous_response_id: first, input });
  const foreignResponse = await createdId(origin, '/v1/responses', OTHER_KEY, { model: STATEFUL_MODEL, input: 'Hello.' });
  return { response, foreignResponse };
}

/** MCP sessions the `/mcp` cases run in: the caller's and another key's, at `MCP_FUZZ_VERSION`. */
async function createMcpSessions(origin: string): Promise<Pick<PreparedIds, 'mcpSession' | 'foreignMcpSession'>> {
  const open = async (key: string) => {
    const initialize = { protocolVersion: MCP_FUZZ_VERSION, capabilities: {}, clientInfo: { name: 'fuzz', version: '1' } };
    const body = Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: initialize }));
    const headers: [string, string][] = [
      ['host', '127.0.0.1'],
      ['authorization', `Bearer ${key}`],
      ['accept', 'application/json, text/event-stream'],
      ['content-type', 'application/json'],
      ['content-length', String(body.byteLength)],
    ];
    const outcome = await sendRaw(origin, { method: 'POST', target: '/mcp', headers, body }, CASE_DEADLINE_MS);
    const session = outcome.kind === 'response' && outcome.response.status === 200 ? outcome.response.headers['mcp-session-id'] : undefined;
    if (typeof session !== 'string') throw new Error(`could not initialize an MCP session: ${JSON.stringify(outcome).slice(0, 500)}`);
    return session;
  };
  return { mcpSession: await open(FUZZ_KEY), foreignMcpSession: await open(OTHER_KEY) };
}

/** Video tasks the GET cases read: a finished one, one that never finishes, and another key's. */
async function createTasks(origin: string): Promise<Pick<PreparedIds, 'completed' | 'queued' | 'foreign'>> {
  const create = (model: string, key: string) => createdId(origin, '/v1/video/generations', key, { model, prompt: 'a fuzzy cat', seconds: 1, size: '32x32' });
  const completed = await create('local-video', FUZZ_KEY);
  // The local model's tasks finish at once (render time 0); reading the status records that.
  await sendRaw(
    origin,
    {
      method: 'GET',
      target: `/v1/video/generations/${completed}`,
      headers: [
        ['host', '127.0.0.1'],
        ['authorization', `Bearer ${FUZZ_KEY}`],
      ],
      body: new Uint8Array(),
    },
    CASE_DEADLINE_MS,
  );
  return { completed, queued: await create(SLOW_VIDEO_MODEL, FUZZ_KEY), foreign: await create('local-video', OTHER_KEY) };
}
