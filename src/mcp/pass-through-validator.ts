import type { jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';

/**
 * No validators at all, for the gateway's SDK clients and servers: a client then checks no tool's
 * output against its `outputSchema` (`callTool` skips a tool without a validator), so an upstream's
 * result reaches the client as the upstream sent it; and the SDK's default (ajv) is never built
 * (a new Ajv per request's server cost more than the rest of the request) nor compiles code
 * (`new Function`, refused on edge runtimes).
 */
export const passThroughValidator: jsonSchemaValidator = { getValidator: () => undefined as never };
