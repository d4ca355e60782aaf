import { Cluster } from 'ioredis';
import type { RedisClient } from './connection.js';

/**
 * `client`'s twin for SUBSCRIBE: a connection in subscriber mode takes no other command. An
 * offline queue and no retry limit, so the subscription outlives outages (ioredis subscribes
 * again after reconnecting); named `<parent name>:<role>` so `CLIENT LIST` tells it apart.
 */
export function duplicateForSubscribing(client: RedisClient, role: string): RedisClient {
  if (client instanceof Cluster) {
    // `duplicate` merges these into the cluster's own `redisOptions`.
    const connectionName = `${client.options.redisOptions?.connectionName ?? 'infergate'}:${role}`;
    return client.duplicate([], { enableOfflineQueue: true, redisOptions: { maxRetriesPerRequest: null, commandTimeout: undefined, connectionName } });
  }
  return client.duplicate({
    enableOfflineQueue: true,
    maxRetriesPerRequest: null,
    commandTimeout: undefined,
    connectionName: `${client.options.connectionName ?? 'infergate'}:${role}`,
  });
}
