/** The most characters of a client's string an error message or a log line repeats. */
export const ECHO_MAX = 100;

/**
 * A client's string as an error message repeats it: whole when short, else its first `max`
 * characters and its length. An answer must not grow with what the client sent (an 8 MiB
 * model id once came back as an 8 MiB error).
 */
export function echo(text: string, max = ECHO_MAX): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length} characters)`;
}
