import { jsonSchema, tool } from 'ai';

/**
 * The Vercel AI SDK's side of the weather-and-time tool loop: two tools answering fixed values
 * and recording what they were called with. `closed` adds `additionalProperties: false` to both
 * schemas (what OpenAI's strict mode asks for).
 */
export function weatherAndTimeTools(executed: unknown[], { closed = false } = {}) {
  const object = (properties: Record<string, unknown>, required: string[]) => ({
    type: 'object' as const,
    properties,
    required,
    ...(closed ? { additionalProperties: false } : {}),
  });
  return {
    get_weather: tool({
      description: 'Weather of a city',
      inputSchema: jsonSchema<{ city: string }>(object({ city: { type: 'string' } }, ['city'])),
      execute: async (input) => {
        executed.push(input);
        return '18°C';
      },
    }),
    get_time: tool({
      inputSchema: jsonSchema<{ tz: string }>(object({ tz: { type: 'string' } }, ['tz'])),
      execute: async (input) => {
        executed.push(input);
        return '14:05';
      },
    }),
  };
}
