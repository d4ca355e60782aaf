/**
 * Blanks out of an upstream's error text what names a machine: URLs, IP addresses, `host:port`,
 * and dotted names ending in a public or internal suffix (`internal-llm-01.corp`,
 * `api.example.com`). Tenants read that text; the operator's network is not theirs to map. Field
 * paths (`messages.0.content`, `tools.function.parameters`) and model ids (`gpt-4.1`) stay: the
 * client needs them, and they end in no such suffix. A bare name without a dot or port
 * (`llm-backend`) cannot be told from a word, and passes.
 *
 * The text may echo a client's input at length, so every step is linear: the text is cut into
 * words once, and each word is tested by anchored patterns that cannot backtrack far.
 */
export function blankHostNames(text: string): string {
  return text.replace(WORD, (word) => (URL.test(word) ? HOST : word.replace(NAME, blankName)));
}

const HOST = '[host]';

/** A run of characters a URL or host name is written with (up to a space, quote, bracket or comma). */
const WORD = /[^\s"'<>(){}|\\^`,;]+/g;
const URL = /^[a-z][a-z0-9+.-]*:\/\//i;
/** The part of a word a host name can be made of (`auth=x.corp` holds one). */
const NAME = /[a-z0-9.:[\]-]+/gi;

const SUFFIXES = [
  // Internal and reserved names.
  'corp|internal|intranet|intra|local|localdomain|localhost|lan|home|private|svc|cluster|example|test|invalid|arpa',
  // Common public suffixes.
  'com|net|org|io|ai|dev|app|cloud|co|info|biz|us|uk|de|eu|fr|nl|cn|jp|kr|in|ru|br|au|ca|sg|ch|se|tech|xyz|site|online',
].join('|');

const HOST_PATTERNS = [
  /^\d{1,3}(?:\.\d{1,3}){3}(?::\d{1,5})?$/,
  /^\[[0-9a-f:.]+\](?::\d{1,5})?$/i,
  new RegExp(String.raw`^(?:[a-z0-9-]+\.)+(?:${SUFFIXES})$`, 'i'),
  /^localhost$/i,
];
/** `name:port`: tested apart from "has a letter", which one pattern would test by backtracking. */
const WITH_PORT = /^[a-z0-9.-]+:\d{1,5}$/i;

function blankName(name: string): string {
  // Punctuation that ends a sentence or a clause is not part of the name.
  let end = name.length;
  while (end > 0 && (name[end - 1] === '.' || name[end - 1] === ':' || name[end - 1] === '-')) end--;
  const candidate = name.slice(0, end);
  const isHost = HOST_PATTERNS.some((pattern) => pattern.test(candidate)) || (WITH_PORT.test(candidate) && /[a-z]/i.test(candidate));
  return isHost ? HOST + name.slice(end) : name;
}
