import { isGatewayError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { GatewayPlugin } from '../plugins/plugin.js';
import type { AnswerTransform, TextTurn } from '../plugins/text-stage.js';
import type { IRResponse } from '../protocols/ir.js';
import type { GuardrailPhase } from './checker.js';
import type { Guardrail } from './guardrail.js';
import { requestTexts, responseTexts, withResponseTexts } from './ir-texts.js';
import { maskBody } from './mask-body.js';
import { checkTexts, isPromise, type PhaseContext } from './run-checks.js';
import { windowedStream, type WindowOptions } from './stream-window.js';

/** Which guardrails a turn meets: the gateway's, its key's group's, its model's and its key's, merged by name. */
export type GuardrailSelector = (turn: TextTurn) => readonly Guardrail[];

/**
 * The guardrails as a text stage: the prompt (as the IR) checked before the cache and the
 * deployments, masked in the body itself so passthrough keeps the client's other fields; the
 * answer checked as the IR, whole or in windows of the stream, by a transform (on passthrough the
 * answer is then decoded, the request still sent as it came). A turn no guardrail applies to
 * passes at once, with nothing decoded.
 */
export function guardrailPlugin(select: GuardrailSelector, logger: Logger): GatewayPlugin {
  return {
    wrapText(turn, next) {
      const guardrails = select(turn);
      if (guardrails.length === 0) return next();
      return guarded(turn, next, guardrails, logger);
    },
  };
}

async function guarded(turn: TextTurn, next: () => Promise<Response>, guardrails: readonly Guardrail[], logger: Logger): Promise<Response> {
  const input = guardrails.filter((guardrail) => guardrail.input);
  const output = guardrails.filter((guardrail) => guardrail.output);
  if (input.length > 0) await checkPrompt(turn, input, phaseContext(turn, 'input', logger));
  if (output.length > 0) turn.transformAnswer(answerTransform(output, phaseContext(turn, 'output', logger)));
  return next();
}

function phaseContext(turn: TextTurn, phase: GuardrailPhase, logger: Logger): PhaseContext {
  return {
    phase,
    requestId: turn.requestId,
    model: turn.model.id,
    signal: turn.signal,
    report: (outcome) => turn.report(outcome),
    failed: (guardrail, error) =>
      logger.warn('guardrail check failed', { requestId: turn.requestId, guardrail, phase, message: error instanceof Error ? error.message : String(error) }),
  };
}

async function checkPrompt(turn: TextTurn, guardrails: readonly Guardrail[], context: PhaseContext): Promise<void> {
  const texts = promptTexts(turn);
  if (texts.length === 0) return;
  const checked = await checkTexts(guardrails, texts, context);
  if (checked.masked) turn.setBody(maskBody(turn.body as Record<string, unknown>, texts, checked.texts, checked.findings));
}

/** The prompt's texts from the IR; a body the IR cannot hold (refused only later, by a translating deployment) is checked string by string. */
function promptTexts(turn: TextTurn): string[] {
  try {
    return requestTexts(turn.ir);
  } catch (error) {
    if (!isGatewayError(error)) throw error;
    const strings: string[] = [];
    collectStrings(turn.body, strings);
    return strings;
  }
}

function collectStrings(value: unknown, out: string[]): void {
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) for (const item of value) collectStrings(item, out);
  else if (value !== null && typeof value === 'object') for (const item of Object.values(value)) collectStrings(item, out);
}

function answerTransform(guardrails: readonly Guardrail[], context: PhaseContext): AnswerTransform {
  return {
    response: (answer) => checkAnswer(answer, guardrails, context),
    stream: (batches) => windowedStream(batches, windowOptions(guardrails, context)),
  };
}

async function checkAnswer(answer: IRResponse, guardrails: readonly Guardrail[], context: PhaseContext): Promise<IRResponse> {
  const texts = responseTexts(answer);
  if (texts.length === 0) return answer;
  const checked = await checkTexts(guardrails, texts, context);
  return checked.masked ? withResponseTexts(answer, checked.texts) : answer;
}

/**
 * How a stream is cut into the windows the guardrails check: local detectors hold back their
 * longest finding, so a value is never released split; remote checkers see windows of their
 * `window` characters, cut at a sentence end when one is near.
 */
function windowOptions(guardrails: readonly Guardrail[], context: PhaseContext): WindowOptions {
  const local = guardrails.filter((guardrail) => guardrail.checker.maxFindingLength !== undefined);
  const remote = guardrails.filter((guardrail) => guardrail.checker.maxFindingLength === undefined);
  const growing = local.flatMap((guardrail) => (guardrail.checker.holdFrom ? [guardrail.checker.holdFrom.bind(guardrail.checker)] : []));
  return {
    holdChars: Math.max(0, ...local.map((guardrail) => guardrail.checker.maxFindingLength!)),
    windowChars: remote.length > 0 ? Math.min(...remote.map((guardrail) => guardrail.window)) : 0,
    sentences: remote.length > 0,
    holdFrom:
      growing.length > 0
        ? (text) => {
            let from = -1;
            for (const holdFrom of growing) {
              const at = holdFrom(text);
              if (at >= 0 && (from < 0 || at < from)) from = at;
            }
            return from;
          }
        : undefined,
    scan:
      local.length > 0
        ? (text) => {
            const spans: { start: number; end: number }[] = [];
            for (const guardrail of local) {
              const verdicts = guardrail.checker.check([text], context);
              if (Array.isArray(verdicts)) spans.push(...(verdicts as Awaited<typeof verdicts>)[0]!.findings);
            }
            return spans;
          }
        : undefined,
    release: (window) => {
      const checked = checkTexts(guardrails, [window], context);
      return isPromise(checked) ? checked.then((result) => result.texts[0]!) : checked.texts[0]!;
    },
  };
}
