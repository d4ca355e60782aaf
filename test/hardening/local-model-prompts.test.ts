import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IRTool } from '../../src/protocols/ir.js';
import { READ_PROMPT_CHARS, withoutContextNotes } from '../../src/providers/local/local-answer.js';
import { mentionedTool } from '../../src/providers/local/tool-mention.js';
import { mediaGateway, served } from '../media/helpers.js';

/**
 * Security review finding 2: two regexes of the local model were quadratic in the prompt (1 MB of
 * `<system-reminder>` blocked `npm start`'s server 7.4 s, 200 KB without spaces plus a tool
 * 20.6 s), and each tool name was a regex over the whole prompt. The inputs here are ten times
 * the review's: at the old code's measured growth they would take minutes to hours, so an answer
 * within the test timeout shows the work is linear. The results are asserted too.
 */

let app: Awaited<ReturnType<typeof served>>;
beforeAll(async () => {
  app = await served(mediaGateway());
});
afterAll(() => app.close());

const weather = { type: 'function' as const, function: { name: 'get_weather', parameters: { type: 'object', properties: {} } } };

describe('local model: prompts as long as the body limit allows are read in linear time', () => {
  it('2 MB without a space plus a tool: answered, in text (the prompt names no tool)', async () => {
    const completion = await app.client.chat.completions.create({
      model: 'local-chat',
      messages: [{ role: 'user', content: 'a'.repeat(2_000_000) }],
      tools: [weather],
    });
    expect(completion.choices[0]!.finish_reason).toBe('stop');
    expect(completion.choices[0]!.message.content).toMatch(/^You said: "a{79}…"/);
  });

  it('2 MB of paths without spaces around the tool name: the name is still found', async () => {
    const completion = await app.client.chat.completions.create({
      model: 'local-chat',
      messages: [{ role: 'user', content: `${'/a'.repeat(1_000_000)} what is the weather?` }],
      tools: [weather],
    });
    expect(completion.choices[0]!.message.tool_calls?.[0]).toMatchObject({ function: { name: 'get_weather' } });
  });

  it('120,000 unclosed <system-reminder> notes (2 MB), then the words that name the tool', async () => {
    const completion = await app.client.chat.completions.create({
      model: 'local-chat',
      messages: [{ role: 'user', content: `${'<system-reminder>'.repeat(120_000)} get weather` }],
      tools: [weather],
    });
    // An unclosed note is no note: its text stays, and the tool named after it is called.
    expect(completion.choices[0]!.message.tool_calls?.[0]).toMatchObject({ function: { name: 'get_weather' } });
  });

  it('a path of 100,000 dots before its last letter fills a file_path argument (its trailing punctuation cut in one scan)', async () => {
    const read = {
      type: 'function' as const,
      function: { name: 'read_file', parameters: { type: 'object', properties: { file_path: { type: 'string' } }, required: ['file_path'] } },
    };
    const path = `/${'.'.repeat(100_000)}x`;
    const completion = await app.client.chat.completions.create({
      model: 'local-chat',
      messages: [{ role: 'user', content: `read file ${path}...` }],
      tools: [read],
    });
    const call = completion.choices[0]!.message.tool_calls?.[0];
    expect(call).toMatchObject({ function: { name: 'read_file' } });
    expect(JSON.parse(call!.type === 'function' ? call!.function.arguments : '{}')).toEqual({ file_path: path });
  });

  it('a 2 MB file name to read, without a tool named: a shell tool cats it, the name found in one scan', async () => {
    const shell = {
      type: 'function' as const,
      function: { name: 'exec_command', parameters: { type: 'object', properties: { cmd: { type: 'string' } }, required: ['cmd'] } },
    };
    const name = `${'ab.c/'.repeat(400_000)}notes.txt`;
    const completion = await app.client.chat.completions.create({
      model: 'local-chat',
      messages: [{ role: 'user', content: `e.g. read ${name}.` }],
      tools: [shell],
    });
    const call = completion.choices[0]!.message.tool_calls?.[0];
    // The model reads the prompt's two ends: the second starts inside the name, with a `/`.
    expect(call).toMatchObject({ function: { name: 'exec_command' } });
    expect(JSON.parse(call!.type === 'function' ? call!.function.arguments : '{}').cmd).toMatch(/^cat \/ab\.c\/(ab\.c\/)+notes\.txt$/);
  });

  it('20,000 tools and a 300 KB prompt of words: the one tool it names, with no regex per tool', async () => {
    const tools = Array.from({ length: 20_000 }, (_, index) => ({
      type: 'function' as const,
      function: { name: `lookup_item_${index}`, parameters: { type: 'object', properties: {} } },
    }));
    const completion = await app.client.chat.completions.create({
      model: 'local-chat',
      messages: [{ role: 'user', content: `${'lookup item words '.repeat(17_000)} please lookup item 19999` }],
      tools,
    });
    expect(completion.choices[0]!.message.tool_calls?.[0]).toMatchObject({ function: { name: 'lookup_item_19999' } });
  });
});

describe('local model: what it reads of a prompt', () => {
  it('notes are cut with one scan: closed ones go, an unclosed one stays with what follows', () => {
    expect(withoutContextNotes('a <system-reminder>x</system-reminder> b <system-reminder>y</system-reminder>')).toBe('a   b');
    expect(withoutContextNotes('<system-reminder>x</system-reminder>'.repeat(50_000))).toBe('');
    const unclosed = `a <system-reminder>x</system-reminder> b ${'<system-reminder>'.repeat(3)} c`;
    expect(withoutContextNotes(unclosed)).toBe(`a   b ${'<system-reminder>'.repeat(3)} c`);
    // Nested: the first close ends the note, as the lazy regex did.
    expect(withoutContextNotes('<system-reminder> a <system-reminder> b </system-reminder> c </system-reminder>')).toBe('c </system-reminder>');
    // Gemini CLI's and Codex's context notes too, each closed by its own tag.
    expect(withoutContextNotes('<session_context>/srv</session_context> a <environment_context><cwd>/srv</cwd></environment_context> b')).toBe('a   b');
    expect(withoutContextNotes(`${'<session_context>'.repeat(120_000)}</system-reminder> c`)).toBe(
      `${'<session_context>'.repeat(120_000)}</system-reminder> c`,
    );
  });

  it('a tool is named by its whole name (single spaces, _ or -, a plural) or by a telling word, never inside a path', () => {
    const tool = (name: string): IRTool => ({ name });
    const tools = [tool('get_current_weather'), tool('search_docs'), tool('weather')];
    expect(mentionedTool(tools, 'get current weathers now')?.name).toBe('get_current_weather');
    expect(mentionedTool(tools, 'get-current_weather')?.name).toBe('get_current_weather');
    // Two spaces or a full stop break a name: the telling word "current"… is generic; "weather" is the third tool's whole name.
    expect(mentionedTool(tools, 'get  current weather')?.name).toBe('weather');
    expect(mentionedTool(tools, 'look it up in the docs')?.name).toBe('search_docs');
    expect(mentionedTool(tools, 'read /srv/weather/docs.txt')).toBeUndefined();
    expect(mentionedTool(tools, 'nothing here')).toBeUndefined();
  });

  it('a prompt longer than READ_PROMPT_CHARS is read by its two ends', async () => {
    const middle = 'x '.repeat(READ_PROMPT_CHARS);
    const named = async (content: string) => {
      const completion = await app.client.chat.completions.create({ model: 'local-chat', messages: [{ role: 'user', content }], tools: [weather] });
      const call = completion.choices[0]!.message.tool_calls?.[0];
      return call?.type === 'function' ? call.function.name : undefined;
    };
    expect(await named(`weather ${middle}`)).toBe('get_weather');
    expect(await named(`${middle} weather`)).toBe('get_weather');
    expect(await named(`${middle} weather ${middle}`)).toBeUndefined();
  });
});
