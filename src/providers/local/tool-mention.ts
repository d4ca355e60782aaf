import type { IRTool } from '../../protocols/ir.js';
import { COMMAND_NAME, PATH_NAME } from './tool-arguments.js';

/** Words in tool names that say nothing about the tool, so a prompt using them asks for none. */
const GENERIC_WORDS = new Set([
  'get',
  'set',
  'list',
  'fetch',
  'create',
  'update',
  'delete',
  'make',
  'run',
  'call',
  'tool',
  'function',
  'current',
  'info',
  'data',
  'api',
  'the',
  'for',
  'and',
]);

/** A name of more words than this is only found by its telling words: it bounds the walk per prompt word. */
const MAX_NAME_WORDS = 16;

/**
 * The tool the prompt names: its full name first ("get_weather", "get weather", "get-weathers"),
 * then a telling word ("weather"). Words inside paths ("/tmp/agent-1/notes.txt") name no tool.
 * The prompt is read once into words, and the names are looked up in it: the work grows with the
 * prompt plus the names, never with their product (a regex per tool over the prompt did).
 */
export function mentionedTool(tools: readonly IRTool[], prompt: string): IRTool | undefined {
  const words = promptWords(prompt);
  const names = tools.map((tool) => nameWords(tool.name));
  const named = fullNamesIn(words, names);
  const index = names.findIndex((name) => named.has(name.join(' ')));
  if (index >= 0) return tools[index];
  const present = new Set(words.map((word) => word.text));
  const has = (word: string) => present.has(word) || present.has(`${word}s`) || present.has(`${word}es`);
  return tools.find((_, at) => names[at]!.some((word) => word.length >= 3 && !GENERIC_WORDS.has(word) && has(word)));
}

/**
 * The tool that reads a file the prompt names without naming a tool ("read notes.txt"): one taking
 * a shell command, which `cat`s it (Codex's `exec_command`), else one taking a path; both as a
 * required argument, so the value the local model fills in is the one the tool acts on.
 */
export function fileReadingTool(tools: readonly IRTool[]): IRTool | undefined {
  return tools.find((tool) => requires(tool, COMMAND_NAME)) ?? tools.find((tool) => requires(tool, PATH_NAME));
}

function requires(tool: IRTool, name: RegExp): boolean {
  const required = tool.parameters?.required;
  return Array.isArray(required) && required.some((entry) => typeof entry === 'string' && name.test(entry));
}

/** A word of the prompt; `joined`: a single space (once `_` and `-` are spaces) separates it from the word before. */
interface PromptWord {
  text: string;
  joined: boolean;
}

/**
 * The prompt's lowercase words (runs of `a-z0-9`), without those of a run of non-spaces holding a
 * `/` (a path or a URL); runs of `_` and `-` are one space. Each step is a linear scan.
 */
function promptWords(prompt: string): PromptWord[] {
  const text = prompt
    .replace(/\S+/g, (run) => (run.includes('/') ? ' ' : run))
    .toLowerCase()
    .replace(/[_-]+/g, ' ');
  const words: PromptWord[] = [];
  let previousEnd = -2;
  for (const match of text.matchAll(/[a-z0-9]+/g)) {
    words.push({ text: match[0], joined: match.index === previousEnd + 1 && text[previousEnd] === ' ' });
    previousEnd = match.index + match[0].length;
  }
  return words;
}

/** The names (their words joined by a space) found whole in the prompt, the last word maybe in the plural. */
function fullNamesIn(words: readonly PromptWord[], names: readonly string[][]): Set<string> {
  const root = new NameNode();
  for (const name of names) if (name.length > 0 && name.length <= MAX_NAME_WORDS) root.add(name);
  const found = new Set<string>();
  for (let start = 0; start < words.length; start++) {
    let node: NameNode | undefined = root;
    for (let at = start; node && at < words.length && (at === start || words[at]!.joined); at++) {
      const text = words[at]!.text;
      for (const stem of [text, text.endsWith('s') ? text.slice(0, -1) : '', text.endsWith('es') ? text.slice(0, -2) : '']) {
        const name = stem && node.next.get(stem)?.name;
        if (name) found.add(name);
      }
      node = node.next.get(text);
    }
  }
  return found;
}

/** A trie of tool names by word: `name` is set where a whole name ends. */
class NameNode {
  readonly next = new Map<string, NameNode>();
  name: string | undefined;

  add(words: readonly string[]): void {
    let node: NameNode = this;
    for (const word of words) {
      let child = node.next.get(word);
      if (!child) node.next.set(word, (child = new NameNode()));
      node = child;
    }
    node.name = words.join(' ');
  }
}

function nameWords(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
}
