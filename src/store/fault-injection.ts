/**
 * Store faults for tests of the retry paths (issue 42): a store step that was applied and still
 * reported failed. That is what a replica acknowledgement that timed out leaves behind (the write
 * is on the master), and what a lost answer leaves (a connection dropped after the command ran;
 * the client resends it, or the caller retries). Every caller must treat a failed step as "maybe
 * done": a retry that finds its own earlier write must not take it for someone else's.
 *
 * Honoured only under `NODE_ENV=test`, as the test clock file is.
 */
import type { StorePort } from './port.ts';

/**
 * The environment variable naming the fraction (0–1) of store calls that run and then reject
 * with {@link InjectedStoreFault}, in every process of a test's fleet.
 */
export const TEST_STORE_FAULTS_ENV = 'NOSTR_PUSH_TEST_STORE_FAULTS';

/** What an injected fault rejects with. */
export class InjectedStoreFault extends Error {
  constructor(method: string) {
    super(`injected store fault: ${method} was applied, its answer lost`);
    this.name = 'InjectedStoreFault';
  }
}

/**
 * Methods left alone: closing; and the settlement of leased queue items, whose lost answer only
 * ever repeats work (the lease expires and the item is handled again: the queues' at-least-once
 * contract, a duplicate per lost answer), so faults there would only blur the bound on repeats
 * a test of the other steps asserts.
 */
const EXEMPT = new Set<string | symbol>(['close', 'then', 'settleLeased', 'ack', 'retry', 'deadLetter']);

/** The fraction {@link TEST_STORE_FAULTS_ENV} asks for, or undefined when it is unset. */
export function storeFaultsFromEnv(env: NodeJS.ProcessEnv = process.env): number | undefined {
  const raw = env[TEST_STORE_FAULTS_ENV];
  if (raw === undefined || raw === '') return undefined;
  if (env.NODE_ENV !== 'test') throw new Error(`${TEST_STORE_FAULTS_ENV} is only honoured with NODE_ENV=test`);
  const fraction = Number(raw);
  if (!Number.isFinite(fraction) || fraction < 0 || fraction > 1)
    throw new Error(`${TEST_STORE_FAULTS_ENV} must be a fraction from 0 to 1, got ${raw}`);
  return fraction;
}

/**
 * `store`, with a `fraction` of its asynchronous calls rejected after they completed. The
 * `armed` switch lets start-up finish first (the service's own one-time reads and writes).
 */
export function withStoreFaults(store: StorePort, fraction: number, armed: () => boolean, random: () => number = Math.random): StorePort {
  return new Proxy(store, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function' || EXEMPT.has(property)) return value;
      const method = value as (...args: unknown[]) => unknown;
      return (...args: unknown[]): unknown => {
        const result = method.apply(target, args);
        if (!(result instanceof Promise) || !armed()) return result;
        return result.then((answer: unknown) => {
          if (random() < fraction) throw new InjectedStoreFault(String(property));
          return answer;
        });
      };
    },
  });
}
