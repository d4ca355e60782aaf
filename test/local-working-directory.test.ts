import { describe, expect, it } from 'vitest';
import type { IRMessage, IRRequest, IRTool } from '../src/protocols/ir.js';
import { planReply } from '../src/providers/local/local-answer.js';
import { statedWorkingDirectory } from '../src/providers/local/working-directory.js';

/**
 * The local model reads a file the prompt names relatively ("read notes.txt") at the path the
 * agent's own tool wants, resolved against the working directory the agent states. The
 * statements below are the agents' own words, as their binaries send them (Claude Code 2.1.332,
 * Codex 0.171.0, Gemini CLI 0.61.0) and as their earlier versions did.
 */

const text = (value: string) => ({ type: 'text' as const, text: value });
const user = (...parts: string[]): IRMessage => ({ role: 'user', content: parts.map(text) });

function request(fields: Partial<IRRequest>): IRRequest {
  return { model: 'local-chat', system: [], messages: [], stream: false, passthrough: {}, ...fields };
}

const tool = (name: string, required: string[]): IRTool => ({
  name,
  parameters: { type: 'object', properties: Object.fromEntries(required.map((field) => [field, { type: 'string' }])), required },
});

/** The tools each agent offers, as far as the choice goes (names and required arguments). */
const CLAUDE_CODE_TOOLS = [tool('Agent', ['prompt']), tool('Bash', ['command']), tool('Read', ['file_path']), tool('Write', ['file_path', 'content'])];
const CODEX_TOOLS = [tool('exec_command', ['cmd']), tool('write_stdin', ['session_id']), tool('view_image', ['path'])];
const GEMINI_TOOLS = [
  tool('update_topic', ['title']),
  tool('list_directory', ['dir_path']),
  tool('read_file', ['file_path']),
  tool('run_shell_command', ['command']),
];

const CLAUDE_CODE_ENV = [
  '# Environment',
  'You have been invoked in the following environment: ',
  ' - Primary working directory: /srv/work dir',
  ' - Is a git repository: false',
  ' - Platform: linux',
].join('\n');
const CODEX_ENV = '<environment_context>\n  <cwd>/srv/work</cwd>\n  <shell>bash</shell>\n</environment_context>';
const GEMINI_ENV = [
  '<session_context>',
  'This is the Gemini CLI. We are setting up the context for our chat.',
  "The project's temporary directory is: /home/u/.gemini/tmp/work",
  '- **Workspace Directories:**',
  '  - /srv/work',
  '- **Directory Structure:**',
  '',
  '/srv/work/',
  '└───notes.txt',
  '</session_context>',
].join('\n');

function call(plan: ReturnType<typeof planReply>): { name: string; args: Record<string, unknown> } {
  expect(plan.kind).toBe('tool_call');
  if (plan.kind !== 'tool_call') throw new Error('no tool call');
  return { name: plan.name, args: JSON.parse(plan.arguments) };
}

describe('statedWorkingDirectory', () => {
  it('reads each agent’s statement, wherever the agent puts it', () => {
    // Claude Code: in the system prompt, a system message (a model it does not know), or a note of the first user turn (a Claude model).
    expect(statedWorkingDirectory(request({ system: [text(CLAUDE_CODE_ENV)] }))).toBe('/srv/work dir');
    expect(statedWorkingDirectory(request({ messages: [user('hi'), { role: 'system', content: [text(CLAUDE_CODE_ENV)] }] }))).toBe('/srv/work dir');
    expect(statedWorkingDirectory(request({ messages: [user(`<system-reminder>\n${CLAUDE_CODE_ENV}\n</system-reminder>`, 'hi')] }))).toBe('/srv/work dir');
    // Its note after the directory changed.
    expect(statedWorkingDirectory(request({ system: [text(' - Primary working directory: /srv/new (was /srv/old)')] }))).toBe('/srv/new');
    // Claude Code before 2.1, inside <env>.
    expect(statedWorkingDirectory(request({ system: [text('<env>\nWorking directory: /old/cc\nIs directory a git repo: No\n</env>')] }))).toBe('/old/cc');
    expect(statedWorkingDirectory(request({ messages: [user(CODEX_ENV), user('read notes.txt')] }))).toBe('/srv/work');
    expect(statedWorkingDirectory(request({ messages: [user(GEMINI_ENV, 'read notes.txt')] }))).toBe('/srv/work');
    // Gemini CLI before its <session_context>.
    expect(statedWorkingDirectory(request({ messages: [user("I'm currently working in the directory: /old/gemini\nHere is the folder structure")] }))).toBe(
      '/old/gemini',
    );
  });

  it('is undefined when no agent stated one: a path in passing is no statement', () => {
    expect(statedWorkingDirectory(request({ messages: [user('my working directory is /tmp, read notes.txt')] }))).toBeUndefined();
    expect(statedWorkingDirectory(request({ system: [text('Working directory: relative/dir')] }))).toBeUndefined();
    // Assistant turns and tool results are not the agent's statements.
    expect(statedWorkingDirectory(request({ messages: [{ role: 'assistant', content: [text(CLAUDE_CODE_ENV)] }] }))).toBeUndefined();
  });

  it('reads the first megabyte of the request only: a statement after 20 MB of near-misses is not looked for', () => {
    const filler = 'Working directory: \n'.repeat(1_000_000);
    expect(statedWorkingDirectory(request({ messages: [user(CODEX_ENV), user(filler)] }))).toBe('/srv/work');
    expect(statedWorkingDirectory(request({ system: [text(filler)], messages: [user(CODEX_ENV)] }))).toBeUndefined();
  });
});

describe('the local model asked to read a file by name', () => {
  it('calls Claude Code’s Read with the absolute path', () => {
    const plan = planReply(request({ tools: CLAUDE_CODE_TOOLS, messages: [user('read notes.txt'), { role: 'system', content: [text(CLAUDE_CODE_ENV)] }] }));
    expect(call(plan)).toEqual({ name: 'Read', args: { file_path: '/srv/work dir/notes.txt' } });
  });

  it('calls Codex’s exec_command with a cat of the file in its directory (no tool named)', () => {
    const plan = planReply(request({ tools: CODEX_TOOLS, messages: [user(CODEX_ENV), user('read notes.txt')] }));
    expect(call(plan)).toEqual({ name: 'exec_command', args: { cmd: 'cat /srv/work/notes.txt' } });
  });

  it('calls Gemini CLI’s read_file with the file, not a directory of its context', () => {
    const plan = planReply(request({ tools: GEMINI_TOOLS, messages: [user(GEMINI_ENV, 'read notes.txt')] }));
    expect(call(plan)).toEqual({ name: 'read_file', args: { file_path: '/srv/work/notes.txt' } });
  });

  it('resolves ./ and ../, keeps an absolute or home path, and quotes a path the shell would split', () => {
    const claude = (prompt: string) => call(planReply(request({ tools: CLAUDE_CODE_TOOLS, system: [text(CLAUDE_CODE_ENV)], messages: [user(prompt)] }))).args;
    expect(claude('read ./docs/a.md')).toEqual({ file_path: '/srv/work dir/docs/a.md' });
    expect(claude('read ../notes.txt')).toEqual({ file_path: '/srv/notes.txt' });
    expect(claude('read src/app.ts, please')).toEqual({ file_path: '/srv/work dir/src/app.ts' });
    expect(claude('read /etc/hosts.')).toEqual({ file_path: '/etc/hosts' });
    expect(claude('read ~/notes.txt')).toEqual({ file_path: '~/notes.txt' });
    const bash = planReply(request({ tools: [tool('Bash', ['command'])], system: [text(CLAUDE_CODE_ENV)], messages: [user('show notes.txt')] }));
    expect(call(bash).args).toEqual({ command: "cat '/srv/work dir/notes.txt'" });
  });

  it('without a stated directory keeps the name as written; a code span is the command as written', () => {
    expect(call(planReply(request({ tools: CLAUDE_CODE_TOOLS, messages: [user('read notes.txt')] }))).args).toEqual({ file_path: 'notes.txt' });
    const span = planReply(request({ tools: CODEX_TOOLS, messages: [user(CODEX_ENV), user('use exec_command to run `cat notes.txt | wc -l`')] }));
    expect(call(span).args).toEqual({ cmd: 'cat notes.txt | wc -l' });
  });

  it('answers in text when the prompt names a file but asks for no reading, or names no file ("e.g." is none)', () => {
    expect(planReply(request({ tools: CODEX_TOOLS, messages: [user(CODEX_ENV), user('notes.txt is long')] })).kind).toBe('text');
    expect(planReply(request({ tools: CODEX_TOOLS, messages: [user(CODEX_ENV), user('read it, e.g. slowly')] })).kind).toBe('text');
  });
});
