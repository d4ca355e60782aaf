// What the gateway's stores and caches hold at the end of a soak: the entries of each (the sizes of
// the Maps and Sets among its fields, read through fields that are private to the library: a
// bench may, the library has no API for it) and the live heap they retain, found by emptying them
// one after the other with a forced GC around each. Run in the gateway process, after the load.

/**
 * The stores of a gateway's runtime (`gateway.options`), by name. Upstream access-token caches
 * live in their providers' closures, out of reach; the soak's providers use static keys.
 * @param {any} runtime
 * @returns {[string, object | undefined][]}
 */
export function gatewayStores(runtime) {
  const { policies } = runtime;
  return [
    ['video task store', runtime.taskStore],
    ['response store', runtime.responseStore],
    ['response cache', runtime.responseCache],
    ['limit engine', policies.limitEngine],
    ['budget policy (unpriced models logged)', policies.budgets],
    ['deployment health', policies.health],
    ['usage store', runtime.usageStore],
    ['model catalog (wildcard cache)', runtime.catalog],
    ['pricing (catalog lookups, unpriced logged)', runtime.pricing],
    ['key store', runtime.keyStore],
    ['video tasks (refreshes in flight)', runtime.videoTasks],
  ];
}

/**
 * @typedef {{ name: string, present: boolean, entries: Record<string, number>, bytes: number, liveHeapAfter: number }} StoreRow
 * @param {[string, object | undefined][]} stores
 * @param {() => number} liveHeap  forces a GC and returns the heap in use
 * @returns {{ liveHeapBefore: number, rows: StoreRow[] }}
 */
export function inventory(stores, liveHeap) {
  const found = stores.map(([name, store]) => ({ name, store, collections: store ? collectionsOf(store) : [] }));
  const liveHeapBefore = liveHeap();
  let before = liveHeapBefore;
  /** @type {StoreRow[]} */
  const rows = [];
  for (const { name, store, collections } of found) {
    const entries = Object.fromEntries(collections.map(({ path, collection }) => [path, collection.size]));
    for (const { collection } of collections) collection.clear();
    const after = collections.length > 0 ? liveHeap() : before;
    rows.push({ name, present: store !== undefined, entries, bytes: before - after, liveHeapAfter: after });
    before = after;
  }
  return { liveHeapBefore, rows };
}

/**
 * The Maps and Sets among an object's own fields, and one level into the class instances among
 * them (the response cache's store, a limit engine's counters).
 * @param {object} object @param {string} [prefix] @param {number} [depth]
 * @returns {{ path: string, collection: Map<unknown, unknown> | Set<unknown> }[]}
 */
function collectionsOf(object, prefix = '', depth = 0) {
  /** @type {{ path: string, collection: Map<unknown, unknown> | Set<unknown> }[]} */
  const found = [];
  for (const field of Object.getOwnPropertyNames(object)) {
    const value = /** @type {any} */ (object)[field];
    const path = prefix + field;
    if (value instanceof Map || value instanceof Set) found.push({ path, collection: value });
    else if (depth === 0 && value && typeof value === 'object' && !Array.isArray(value) && value.constructor !== Object) {
      found.push(...collectionsOf(value, `${path}.`, depth + 1));
    }
  }
  return found;
}
