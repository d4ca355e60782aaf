/** A request body: parsed and validated, and the client's JSON text when it is still what was sent. */
export interface TextBody {
  parsed: Record<string, unknown>;
  text: string | undefined;
}
