import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { closeServer, concurrencyProbe, isObject, recordRequest, type RecordedRequest, type Reply } from './fake-server.js';

type Json = Record<string, any>;

/** What the fake analyzer recognizes in English, with Presidio's entity names and typical scores. */
const RECOGNIZERS: { entity: string; pattern: RegExp; score: number }[] = [
  { entity: 'EMAIL_ADDRESS', pattern: /[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/g, score: 1 },
  { entity: 'PHONE_NUMBER', pattern: /\(?\b\d{3}\)?[-. ]\d{3}[-. ]\d{4}\b/g, score: 0.4 },
  { entity: 'PERSON', pattern: /\b(?:Ana Lima|John Smith)\b/g, score: 0.85 },
];
/** Entities the fake's English registry has (more than it finds, as Presidio's). */
const SUPPORTED = new Set([...RECOGNIZERS.map((recognizer) => recognizer.entity), 'CREDIT_CARD', 'US_SSN', 'LOCATION', 'IP_ADDRESS']);

export interface FakePresidioOptions {
  /** Headers every request must carry (an auth proxy in front of the analyzer); else 401. */
  requiredHeaders?: Record<string, string>;
}

export interface FakePresidio {
  url: string;
  readonly requests: RecordedRequest[];
  /** Queues what the next requests get instead of the analysis: `{ hang: true }`, `{ error: { status, message } }`, `{ raw }`. */
  reply(...replies: Pick<Reply, 'hang' | 'error' | 'raw'>[]): void;
  /** Holds answers until no request has come for a moment, so `peakConcurrency` sees the client's fan-out. */
  holdUntilQuiet(on: boolean): void;
  readonly peakConcurrency: number;
  reset(): void;
  close(): Promise<void>;
}

/**
 * A fake Presidio analyzer (`presidio-analyzer/app.py`): `POST /analyze` with a JSON body of
 * `text` (a string, or a list for a batch), `language`, and optional `entities`,
 * `score_threshold` and the analyzer's other fields, answered as Presidio does: a list of
 * `{ analysis_explanation, end, entity_type, score, start }` (keys sorted) with offsets in code
 * points, as Python counts them; errors as `{ "error": … }` — 500 for no text, no or an
 * unsupported language and unknown entities, 400 for a field of the wrong type, 415 for a body
 * that is not JSON.
 */
export async function startFakePresidio(options: FakePresidioOptions = {}): Promise<FakePresidio> {
  const requests: RecordedRequest[] = [];
  let queue: Pick<Reply, 'hang' | 'error' | 'raw'>[] = [];
  const probe = concurrencyProbe();

  const server = createServer((req, res) => {
    void handle(req, res).catch((error: unknown) => send(res, 500, { error: `fake presidio bug: ${String(error)}` }));
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const record = recordRequest(req, res, Buffer.concat(chunks).toString('utf8'), () => false);
    requests.push(record);
    probe.opened(res);

    const refusal = refusalOf(record, options.requiredHeaders ?? {});
    if (refusal) {
      record.rejected = { status: refusal.status, message: refusal.error };
      return send(res, refusal.status, { error: refusal.error });
    }
    await probe.heldUntilQuiet();
    const reply = queue.shift() ?? {};
    if (reply.hang) return; // no answer; the client's abort ends it
    if (reply.error) return send(res, reply.error.status ?? 500, { error: reply.error.message });
    if (reply.raw !== undefined) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(reply.raw);
      return;
    }
    const body = record.body as Json;
    const threshold: number = body.score_threshold ?? 0;
    const analyze = (text: string) => analysis(text, body.entities, threshold);
    return send(res, 200, Array.isArray(body.text) ? body.text.map(analyze) : analyze(body.text));
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    reply: (...replies) => void queue.push(...replies),
    holdUntilQuiet: (on) => probe.hold(on),
    get peakConcurrency() {
      return probe.peak;
    },
    reset() {
      requests.length = 0;
      queue = [];
      probe.reset();
    },
    close: () => closeServer(server),
  };
}

/** What the analyzer answers instead of an analysis, as `app.py` does, if anything. */
function refusalOf(request: RecordedRequest, required: Record<string, string>): { status: number; error: string } | undefined {
  for (const [name, value] of Object.entries(required)) {
    if (request.headers[name.toLowerCase()] !== value) return { status: 401, error: 'Unauthorized' };
  }
  if (request.method !== 'POST' || request.path !== '/analyze') {
    return { status: 404, error: 'The requested URL was not found on the server. If you entered the URL manually please check your spelling and try again.' };
  }
  if (!(request.headers['content-type'] ?? '').startsWith('application/json') || request.body === undefined) {
    return { status: 415, error: "Did not attempt to load JSON data because the request Content-Type was not 'application/json'." };
  }
  const body = request.body;
  if (!isObject(body)) return { status: 500, error: "'list' object has no attribute 'get'" };
  const texts = Array.isArray(body.text) ? body.text : [body.text];
  if (!body.text || texts.some((text: unknown) => typeof text !== 'string')) return { status: 500, error: 'No text provided' };
  if (!body.language) return { status: 500, error: 'No language provided' };
  if (body.language !== 'en') return { status: 500, error: 'No matching recognizers were found to serve the request.' };
  if (body.score_threshold != null && typeof body.score_threshold !== 'number') {
    return { status: 400, error: "Failed to parse /analyze request for AnalyzerEngine.analyze(). '>=' not supported between instances of 'float' and 'str'" };
  }
  if (body.entities != null) {
    if (!Array.isArray(body.entities)) return { status: 400, error: 'Failed to parse /analyze request for AnalyzerEngine.analyze(). entities must be a list' };
    if (body.entities.some((entity: unknown) => !SUPPORTED.has(entity as string))) {
      return { status: 500, error: 'No matching recognizers were found to serve the request.' };
    }
  }
  return undefined;
}

/** The recognizers' results for one text, offsets in code points, sorted by start. */
function analysis(text: string, entities: string[] | undefined, threshold: number): Json[] {
  const codePoints = (unit: number) => Array.from(text.slice(0, unit)).length;
  const results: Json[] = [];
  for (const { entity, pattern, score } of RECOGNIZERS) {
    if ((entities && !entities.includes(entity)) || score < threshold) continue;
    for (const match of text.matchAll(pattern)) {
      results.push({ analysis_explanation: null, end: codePoints(match.index + match[0].length), entity_type: entity, score, start: codePoints(match.index) });
    }
  }
  return results.sort((a, b) => a.start - b.start);
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}
