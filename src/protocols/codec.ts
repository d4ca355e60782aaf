import type { GatewayError } from '../errors.js';

/** What a client-side encoder needs besides the IR: who asked, for what, and where to report bugs. */
export interface EncodeContext {
  /** The public model id the client asked for; encoders echo it, never the upstream id. */
  model: string;
  /** The client's request body as validated (unknown fields kept), for echoes and stream options. */
  request: Record<string, unknown>;
  requestId: string;
  /**
   * Called with an error that ends a stream after it started, before the encoder writes the
   * protocol's error frame (the gateway logs it and feeds usage hooks). The error passed is the
   * masked, public one; the original is in `cause`.
   */
  onStreamError?: (error: GatewayError) => void;
}
