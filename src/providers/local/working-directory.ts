import type { IRRequest } from '../../protocols/ir.js';

/**
 * Where coding agents say they work, each in its own words (the binaries' own text):
 * - Claude Code: `Primary working directory: /dir` (before 2.1: `Working directory: /dir`), in its
 *   environment note: the system prompt, a `system` message or a `<system-reminder>` of the first
 *   user turn, by version and model;
 * - Codex: `<cwd>/dir</cwd>` in the `<environment_context>` user message;
 * - Gemini CLI: `- **Workspace Directories:**` then `  - /dir` in its `<session_context>`
 *   (before 0.30: `I'm currently working in the directory: /dir`).
 * Each alternative starts with a fixed word and reads to the end of its line: one linear pass.
 */
const STATEMENT =
  /^[ \t]*(?:- )?(?:Primary w|W)orking directory: (\/[^\n]*)$|<cwd>(\/[^<\n]*)<\/cwd>|\*\*Workspace Directories:\*\*\n[ \t]*- (\/[^\n]*)|currently working in the directory: (\/[^\n]*)$/m;

/**
 * Characters of the request read for the statement, at most: it comes with the system prompt or
 * the first turns, and a conversation can be as long as the body limit.
 */
const SCAN_CHARS = 1024 * 1024;

/** Claude Code's note of a change, `/new (was /old)`, cut with one search (a regex for it would backtrack on every "(was"). */
function withoutFormer(directory: string): string {
  const was = directory.lastIndexOf(' (was /');
  return was > 0 && directory.endsWith(')') ? directory.slice(0, was) : directory;
}

/** The working directory the agent states in its instructions or context, or undefined. */
export function statedWorkingDirectory(request: IRRequest): string | undefined {
  let budget = SCAN_CHARS;
  const texts = [...request.system, ...request.messages.flatMap((message) => (message.role === 'system' || message.role === 'user' ? message.content : []))];
  for (const part of texts) {
    if (budget <= 0) return undefined;
    if (part.type !== 'text') continue;
    const text = part.text.length > budget ? part.text.slice(0, budget) : part.text;
    budget -= text.length;
    const match = STATEMENT.exec(text);
    const directory = match
      ?.slice(1)
      .find((group) => group !== undefined)
      ?.trimEnd();
    if (directory) return withoutFormer(directory);
  }
  return undefined;
}
