/** One turn of a conversation as the Messages and Converse wires take it. */
export interface Turn<B> {
  role: 'user' | 'assistant';
  content: B[];
}

/**
 * Turns as Anthropic's Messages API and Bedrock's Converse take them: strictly alternating
 * roles, so empty turns are dropped and neighbours of one role merged, and in a user turn the
 * tool results first (both APIs refuse a result that does not open the turn after its call).
 */
export function alternatingTurns<B>(turns: readonly Turn<B>[], isToolResult: (block: B) => boolean): Turn<B>[] {
  const merged: Turn<B>[] = [];
  for (const turn of turns) {
    if (turn.content.length === 0) continue;
    const last = merged.at(-1);
    if (last && last.role === turn.role) last.content.push(...turn.content);
    else merged.push({ role: turn.role, content: [...turn.content] });
  }
  for (const turn of merged) {
    if (turn.role === 'user') turn.content = [...turn.content.filter(isToolResult), ...turn.content.filter((block) => !isToolResult(block))];
  }
  return merged;
}
