/** What the gateway keeps of one upstream session within a client session. */
export interface UpstreamState {
  sessionId?: string | undefined;
  protocolVersion?: string | undefined;
  /** Why the upstream could not be initialized: it is left out of this session's lists. */
  down?: string | undefined;
}

/** What the gateway keeps of one client session: whose it is and the upstream sessions it maps to. */
export interface McpSessionRecord {
  keyId: string;
  /** The protocol version negotiated with the client. */
  protocolVersion: string;
  createdAt: number;
  upstream: Record<string, UpstreamState>;
}

/** Sessions by id, shared by every instance that uses the same store. */
export interface McpSessionStore {
  get(id: string): Promise<McpSessionRecord | undefined>;
  set(id: string, record: McpSessionRecord): Promise<void>;
  delete(id: string): Promise<void>;
}

/** In this process only (the default). */
export class MemoryMcpSessionStore implements McpSessionStore {
  private readonly sessions = new Map<string, McpSessionRecord>();
  async get(id: string) {
    return this.sessions.get(id);
  }
  async set(id: string, record: McpSessionRecord) {
    this.sessions.set(id, record);
  }
  async delete(id: string) {
    this.sessions.delete(id);
  }
}
