/**
 * Status codes shared by the Lua scripts and the SQLite adapter, turned into errors in one place
 * so a caller sees the same error whichever store is behind the port.
 *
 * Lua scripts return these negative integers; SQLite operations return the same values from their
 * transaction functions. Zero or positive results are operation-specific successes.
 */
export enum StoreStatus {
  /** The caller's lease or claim token no longer owns the record. */
  NotOwner = -1,
  /** The record does not exist (never did, expired, or was already completed). */
  NotFound = -2,
  /** The record holds something of an unexpected type or shape (e.g. Redis WRONGTYPE repair). */
  Corrupt = -3,
}

/** The enum name of a status, or undefined for a code no script is documented to return. */
function statusName(status: number): string | undefined {
  return (StoreStatus as unknown as Partial<Record<number, string>>)[status];
}

export class StoreError extends Error {
  constructor(
    /** A {@link StoreStatus}, or a negative code no script is documented to return. */
    readonly status: number,
    readonly operation: string,
    detail?: string,
  ) {
    super(`${operation}: ${statusName(status) ?? `status ${status}`}${detail ? ` (${detail})` : ''}`);
    this.name = 'StoreError';
  }
}

/** Raise the error for a negative status code; pass other values through. */
export function checkStatus(operation: string, code: number, detail?: string): number {
  // A code from a script reply: an unknown negative one still fails, its message giving the number.
  if (code < 0) throw new StoreError(code, operation, detail);
  return code;
}
