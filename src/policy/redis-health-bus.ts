import { jsonLogger, type Logger } from '../logger.js';
import type { RedisClient, RedisConnectionOptions } from '../redis/connection.js';
import { FailFastRedis } from '../redis/fail-fast-redis.js';
import { duplicateForSubscribing } from '../redis/subscriber.js';
import type { HealthBus, HealthNotice } from './health-bus.js';
import { healthNoticeOf } from './health-notice.js';

export interface RedisHealthBusOptions extends RedisConnectionOptions {
  /** Prefix of the key and of the channel. Default `infergate:`. */
  keyPrefix?: string | undefined;
  /** How long a publish or `current()` waits for Redis, in ms. Default 1000. */
  timeoutMs?: number | undefined;
  /** Where failures to reach Redis and malformed messages are told, each kind at most once a minute. Default JSON lines on stderr. */
  logger?: Logger | undefined;
}

/** Longest channel message read; a notice is a few hundred characters. */
const MESSAGE_MAX = 2048;
/** Most states the hash keeps (two per deployment at most); past it, a new one is only published. */
const STORED_MAX = 1000;
/** Most notices waiting to be sent; past it (Redis slow, not down: then each fails at once), new ones are dropped. */
const PENDING_MAX = 100;
/** Each kind of warning is logged at most once in this long. */
const WARN_EVERY_MS = 60_000;

/**
 * Deployment health shared by every gateway instance on one Redis (through `ioredis`, an optional
 * peer dependency): what one instance's breaker decides, the others apply within a message's
 * trip. Import it from `infergate/redis`:
 *
 * ```ts
 * import { RedisHealthBus } from 'infergate/redis';
 * createGateway({ keys, models, policies: { healthBus: new RedisHealthBus({ url: process.env.REDIS_URL }) } });
 * ```
 *
 * A notice is PUBLISHed as JSON on the channel `<prefix>health` (plain pub/sub, which a Redis
 * Cluster forwards to every node) and heard on a connection of its own (`duplicate()` of the
 * client, a cluster's too), which ioredis subscribes again after a reconnection. The same script
 * keeps the states still in force in one hash, `<prefix>health`: a field `<state>|<deployment>`
 * holds `<until>|<from>`, `until` in ms of Redis's clock (`TIME`), so `current()` tells an
 * instance that starts late each state with the time it has left whatever the instances' clocks
 * say. One hash rather than a key per state: `current()` is one read of a bounded hash, where
 * keys would need a SCAN of every primary of a cluster. Redis 7.0 has no per-field expiry, so
 * the scripts drop fields whose time has passed, and the hash expires with its longest state.
 *
 * Redis is never on the request path: `publish` returns at once and a failure is only logged;
 * `current()` answers `[]` while Redis is down. Each instance then goes on with its own health.
 * A message from the channel is checked (`healthNoticeOf`) before any listener sees it.
 */
export class RedisHealthBus implements HealthBus {
  private readonly connection: FailFastRedis;
  private readonly key: string;
  private readonly channel: string;
  private readonly logger: Logger;
  private readonly listeners = new Set<(notice: HealthNotice) => void>();
  /** The `from` of the notices published here: their echoes on the channel are dropped. */
  private readonly ownIds = new Set<string>();
  /**
   * The notices being sent, one after the other: sent at once, a later one could overtake an
   * earlier one (a cluster client sends again, after the others, a command that met a node's
   * connection still opening), and a `closed` arrive before the `open` it ends.
   */
  private sending: Promise<void> = Promise.resolve();
  private pending = 0;
  private subscriber: RedisClient | undefined;
  private subscribed: Promise<void> | undefined;
  /** When each kind of warning was last logged, and how many were left out since. */
  private readonly warnings = new Map<string, { at: number; suppressed: number }>();
  private closed = false;

  constructor(options: RedisHealthBusOptions) {
    if (!options) throw new TypeError('RedisHealthBus: pass `client` (an ioredis client or cluster), `url`, `cluster` or `sentinel`');
    const prefix = options.keyPrefix ?? 'infergate:';
    this.key = `${prefix}health`;
    this.channel = `${prefix}health`;
    this.logger = options.logger ?? jsonLogger;
    this.connection = new FailFastRedis({ ...options, timeoutMs: options.timeoutMs ?? 1000, owner: 'RedisHealthBus' });
  }

  publish(notice: HealthNotice): void {
    const checked = healthNoticeOf(notice);
    if (!checked) {
      this.warn('a malformed notice was not published', { deployment: String(notice?.deployment).slice(0, 100) });
      return;
    }
    if (this.closed) return;
    if (!this.ownIds.has(checked.from)) {
      // An instance publishes under one id; a few more are kept for hosts that change it.
      if (this.ownIds.size >= 16) this.ownIds.clear();
      this.ownIds.add(checked.from);
    }
    if (this.pending >= PENDING_MAX) {
      this.warn('Redis is slow: a health notice was dropped', { deployment: checked.deployment });
      return;
    }
    const args = [this.channel, JSON.stringify(checked), checked.state, checked.deployment, checked.forMs ?? 0, checked.from, STORED_MAX];
    this.pending++;
    this.sending = this.sending
      .then(() => this.connection.call((redis) => redis.eval(PUBLISH, 1, this.key, ...args)))
      .then(
        () => {},
        (error: unknown) => this.warn('could not publish a health notice (this instance goes on with its own health)', { error: messageOf(error) }),
      )
      .finally(() => this.pending--);
  }

  subscribe(listener: (notice: HealthNotice) => void): () => void {
    // A wrapper of its own, so that one function subscribed twice is heard twice and unsubscribed once.
    const entry = (notice: HealthNotice) => listener(notice);
    this.listeners.add(entry);
    if (!this.subscriber && !this.closed) this.startSubscriber();
    return () => {
      this.listeners.delete(entry);
    };
  }

  /** Resolves once the channel is subscribed (or that failed): for tests and hosts that want to wait. */
  async ready(): Promise<void> {
    await this.subscribed;
  }

  async current(): Promise<HealthNotice[]> {
    let reply: unknown;
    try {
      reply = await this.connection.call((redis) => redis.eval(CURRENT, 1, this.key));
    } catch (error) {
      this.warn('could not read the health states in force', { error: messageOf(error) });
      return [];
    }
    const notices: HealthNotice[] = [];
    const values = Array.isArray(reply) ? reply : [];
    for (let i = 0; i + 2 < values.length && notices.length < STORED_MAX; i += 3) {
      const field = String(values[i]);
      const bar = field.indexOf('|');
      const notice = healthNoticeOf({
        state: field.slice(0, bar),
        deployment: field.slice(bar + 1),
        forMs: Number(values[i + 1]),
        from: String(values[i + 2]),
      });
      if (notice && bar > 0 && !this.ownIds.has(notice.from)) notices.push(notice);
    }
    return notices;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.listeners.clear();
    const subscriber = this.subscriber;
    this.subscriber = undefined;
    await Promise.all([subscriber?.quit().catch(() => subscriber.disconnect()), this.connection.close()]);
  }

  /**
   * A connection of its own (one in subscriber mode takes no other command) that queues SUBSCRIBE
   * until Redis answers and retries for as long as it takes: a subscription that failed once
   * would not be renewed on reconnection.
   */
  private startSubscriber(): void {
    const subscriber = duplicateForSubscribing(this.connection.redis, 'health-bus');
    this.subscriber = subscriber;
    subscriber.on('error', (error: unknown) => this.warn('the health subscriber lost Redis (it reconnects)', { error: messageOf(error) }));
    subscriber.on('node error', () => {});
    subscriber.on('message', (channel: string, message: string) => {
      if (channel === this.channel) this.receive(message);
    });
    this.subscribed = subscriber.subscribe(this.channel).then(
      () => {},
      (error: unknown) => {
        if (!this.closed) this.warn('could not subscribe to health notices', { error: messageOf(error) });
      },
    );
  }

  private receive(message: string): void {
    let notice: HealthNotice | undefined;
    try {
      notice = message.length <= MESSAGE_MAX ? healthNoticeOf(JSON.parse(message)) : undefined;
    } catch {}
    if (!notice) {
      this.warn('ignored a malformed message on the health channel', { channel: this.channel, length: message.length });
      return;
    }
    if (this.ownIds.has(notice.from)) return;
    for (const listener of this.listeners) {
      try {
        listener(notice);
      } catch (error) {
        this.warn('a health listener threw', { error: messageOf(error) });
      }
    }
  }

  private warn(message: string, fields: Record<string, unknown>): void {
    const now = Date.now();
    const last = this.warnings.get(message);
    if (last && now - last.at < WARN_EVERY_MS) {
      last.suppressed++;
      return;
    }
    this.warnings.set(message, { at: now, suppressed: 0 });
    this.logger.warn(`RedisHealthBus: ${message}`, { ...fields, ...(last?.suppressed ? { suppressed: last.suppressed } : {}) });
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Redis's clock in ms, and a function that drops the states whose time has passed and returns the
 * others. (The first line lets Redis < 5 replicate writes made after `TIME`.)
 */
const LIVE_STATES = `if redis.replicate_commands then redis.replicate_commands() end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
-- {field, ms left, from, …} of the states in force; the others are deleted.
local function live_states()
  local all = redis.call('HGETALL', KEYS[1])
  local live = {}
  for i = 1, #all, 2 do
    local untilMs, from = string.match(all[i + 1], '^(%d+)|(.*)$')
    untilMs = tonumber(untilMs)
    if untilMs and untilMs > now then
      live[#live + 1] = all[i]
      live[#live + 1] = untilMs - now
      live[#live + 1] = from
    else
      redis.call('HDEL', KEYS[1], all[i])
    end
  end
  return live
end`;

/**
 * KEYS: the hash. ARGV: channel, message, state, deployment, forMs, from, most states kept.
 * `closed` deletes the deployment's states; `open` and `backoff` (re)write theirs, and the
 * hash lives as long as its longest state. Then the message goes out. Sent whole (EVAL): a
 * notice goes out only when a state changes.
 */
const PUBLISH = `${LIVE_STATES}
local state, deployment = ARGV[3], ARGV[4]
if state == 'closed' then
  redis.call('HDEL', KEYS[1], 'open|' .. deployment, 'backoff|' .. deployment)
else
  local field, forMs = state .. '|' .. deployment, tonumber(ARGV[5])
  local room = redis.call('HEXISTS', KEYS[1], field) == 1 or redis.call('HLEN', KEYS[1]) < tonumber(ARGV[7])
  if not room then room = #live_states() / 3 < tonumber(ARGV[7]) end
  if room then
    redis.call('HSET', KEYS[1], field, string.format('%.0f', now + forMs) .. '|' .. ARGV[6])
    if redis.call('PTTL', KEYS[1]) < forMs then redis.call('PEXPIRE', KEYS[1], forMs) end
  end
end
redis.call('PUBLISH', ARGV[1], ARGV[2])
return 1`;

/** KEYS: the hash. Returns {field, ms left, from, …} of the states in force. */
const CURRENT = `${LIVE_STATES}
return live_states()`;
