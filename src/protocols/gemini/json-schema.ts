import { isRecord, type Json } from '../../json.js';

/**
 * Gemini's `Schema` (an OpenAPI 3.0 subset: upper-case `type`, `nullable`, integer bounds that
 * may come as strings, `propertyOrdering`) → the JSON Schema the IR carries. A schema already in
 * JSON Schema (lower-case types, as `parametersJsonSchema` is) comes through unchanged in meaning.
 */
export function jsonSchemaOf(schema: unknown): unknown {
  if (!isRecord(schema)) return schema;
  const out: Json = {};
  for (const [key, value] of Object.entries(schema)) {
    switch (key) {
      case 'type':
        out.type = typeof value === 'string' ? value.toLowerCase() : value;
        break;
      case 'properties':
        out.properties = isRecord(value) ? Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, jsonSchemaOf(sub)])) : value;
        break;
      case 'items':
        out.items = jsonSchemaOf(value);
        break;
      case 'anyOf':
        out.anyOf = Array.isArray(value) ? value.map(jsonSchemaOf) : value;
        break;
      case 'minItems':
      case 'maxItems':
      case 'minLength':
      case 'maxLength':
      case 'minProperties':
      case 'maxProperties':
        // int64 fields: Google's JSON writes them as strings.
        out[key] = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
        break;
      case 'nullable':
      case 'propertyOrdering':
        break;
      default:
        out[key] = value;
    }
  }
  if (schema.nullable === true) {
    if (typeof out.type === 'string') out.type = [out.type, 'null'];
    else if (out.type === undefined && Array.isArray(out.anyOf)) out.anyOf = [...out.anyOf, { type: 'null' }];
  }
  if (out.type === 'type_unspecified') delete out.type;
  return out;
}
