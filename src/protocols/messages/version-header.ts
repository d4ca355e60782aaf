import { GatewayError } from '../../errors.js';

/** The Messages API requires the vendor version header, a YYYY-MM-DD date (docs/endpoints.md). */
export function requireVersionHeader(request: Request): void {
  const version = request.headers.get('anthropic-version');
  if (!version) {
    throw new GatewayError({
      status: 400,
      message: 'The anthropic-version header is required (a date such as 2023-06-01).',
      param: 'anthropic-version',
      code: 'missing_required_header',
    });
  }
  if (!/^\d{4}-\d{2}-\d{2}$/.test(version)) {
    throw new GatewayError({
      status: 400,
      message: `The anthropic-version header must be a date YYYY-MM-DD, received "${version.slice(0, 40)}".`,
      param: 'anthropic-version',
      code: 'invalid_header',
    });
  }
}
