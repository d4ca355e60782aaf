import type { GatewayPlugin } from '../../plugins/plugin.js';
import { conversationStage } from './conversation-stage.js';
import { responseCacheStage } from './cache-stage.js';
import type { PipelineStage, PipelineTurn } from './turn.js';

const built = new WeakMap<readonly GatewayPlugin[], readonly PipelineStage[]>();

/**
 * The stages in order, built once per gateway: conversation state (its history is then part of
 * what the plugins see), the plugins' `wrapText` in plugin order (guardrails first), the response
 * cache innermost (its key covers the body that goes upstream), then the deployments.
 */
export function stagesOf(plugins: readonly GatewayPlugin[]): readonly PipelineStage[] {
  let stages = built.get(plugins);
  if (!stages) {
    stages = [conversationStage, ...plugins.flatMap((plugin) => (plugin.wrapText ? [plugin.wrapText] : [])), responseCacheStage];
    built.set(plugins, stages);
  }
  return stages;
}

/**
 * Runs the stages around `inner`, onion-style (Hono's `compose`): each gets `next`, which runs
 * the rest, at most once. A stage that fails after `next` gave it a streamed answer cancels that
 * stream, so the upstream read does not hang until its idle timeout.
 */
export function runStages(stages: readonly PipelineStage[], turn: PipelineTurn, inner: () => Promise<Response>): Promise<Response> {
  const dispatch = async (index: number): Promise<Response> => {
    const stage = stages[index];
    if (!stage) return inner();
    let answered: Response | undefined;
    let called = false;
    const next = async () => {
      if (called) throw new Error('next() called more than once in a wrapText stage');
      called = true;
      answered = await dispatch(index + 1);
      return answered;
    };
    try {
      return await stage(turn, next);
    } catch (error) {
      answered?.body?.cancel().catch(() => {});
      throw error;
    }
  };
  return dispatch(0);
}
