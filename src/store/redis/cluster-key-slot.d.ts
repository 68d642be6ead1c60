// cluster-key-slot (ioredis' own dependency) ships no types: Redis Cluster's CRC16 slot of a key,
// hash tags included (the part between the first `{` and the next `}` when it is not empty).
declare module 'cluster-key-slot' {
  /** The slot (0–16383) of a key. */
  export default function calculateKeySlot(key: string | Buffer): number;
  /** The slot of the first key, or -1 when the keys are not all in it. */
  export function generateMulti(keys: ReadonlyArray<string | Buffer>): number;
}
