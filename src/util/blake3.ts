/**
 * BLAKE3 in hash mode (no key, no key derivation), written from the BLAKE3 specification
 * (https://github.com/BLAKE3-team/BLAKE3-specs). Node's crypto has no BLAKE3, and the only
 * use here is the coalescing collapse key — `hex(BLAKE3(group id)[0..16])`, divine-push-service's
 * derivation — on inputs of a few hundred bytes, so a plain, allocation-light implementation is
 * enough; it handles any input length (full chunk tree), not only single-chunk inputs.
 */

const BLOCK_LEN = 64;
const CHUNK_LEN = 1024;
const OUT_LEN = 32;

const CHUNK_START = 1;
const CHUNK_END = 2;
const PARENT = 4;
const ROOT = 8;

const IV = new Uint32Array([0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]);
const MSG_PERMUTATION = [2, 6, 3, 10, 7, 0, 4, 13, 1, 11, 12, 5, 9, 14, 15, 8];
const ROUNDS = 7;

function rotr(x: number, n: number): number {
  return ((x >>> n) | (x << (32 - n))) >>> 0;
}

function g(s: Uint32Array, a: number, b: number, c: number, d: number, mx: number, my: number): void {
  s[a] = ((s[a] as number) + (s[b] as number) + mx) >>> 0;
  s[d] = rotr((s[d] as number) ^ (s[a] as number), 16);
  s[c] = ((s[c] as number) + (s[d] as number)) >>> 0;
  s[b] = rotr((s[b] as number) ^ (s[c] as number), 12);
  s[a] = ((s[a] as number) + (s[b] as number) + my) >>> 0;
  s[d] = rotr((s[d] as number) ^ (s[a] as number), 8);
  s[c] = ((s[c] as number) + (s[d] as number)) >>> 0;
  s[b] = rotr((s[b] as number) ^ (s[c] as number), 7);
}

function round(s: Uint32Array, m: Uint32Array): void {
  const w = (i: number): number => m[i] as number;
  g(s, 0, 4, 8, 12, w(0), w(1));
  g(s, 1, 5, 9, 13, w(2), w(3));
  g(s, 2, 6, 10, 14, w(4), w(5));
  g(s, 3, 7, 11, 15, w(6), w(7));
  g(s, 0, 5, 10, 15, w(8), w(9));
  g(s, 1, 6, 11, 12, w(10), w(11));
  g(s, 2, 7, 8, 13, w(12), w(13));
  g(s, 3, 4, 9, 14, w(14), w(15));
}

/** The compression function; returns the first 8 words of the output (a chaining value). */
function compress(cv: Uint32Array, blockWords: Uint32Array, counter: number, blockLen: number, flags: number): Uint32Array {
  const s = new Uint32Array(16);
  s.set(cv, 0);
  s.set(IV.subarray(0, 4), 8);
  s[12] = counter >>> 0;
  s[13] = Math.floor(counter / 0x1_0000_0000) >>> 0;
  s[14] = blockLen;
  s[15] = flags;
  let m = new Uint32Array(blockWords);
  for (let r = 0; r < ROUNDS; r++) {
    round(s, m);
    if (r < ROUNDS - 1) {
      const permuted = new Uint32Array(16);
      for (let i = 0; i < 16; i++) permuted[i] = m[MSG_PERMUTATION[i] as number] as number;
      m = permuted;
    }
  }
  const out = new Uint32Array(8);
  for (let i = 0; i < 8; i++) out[i] = ((s[i] as number) ^ (s[i + 8] as number)) >>> 0;
  return out;
}

/** Little-endian words of a block of at most 64 bytes, zero-padded. */
function blockWords(bytes: Uint8Array): Uint32Array {
  const words = new Uint32Array(16);
  for (let i = 0; i < bytes.length; i++) words[i >> 2] = ((words[i >> 2] as number) | ((bytes[i] as number) << (8 * (i & 3)))) >>> 0;
  return words;
}

/** A node whose chaining value (or root output) is still to be computed. */
interface OutputNode {
  cv: Uint32Array;
  block: Uint32Array;
  counter: number;
  blockLen: number;
  flags: number;
}

function chainingValue(node: OutputNode): Uint32Array {
  return compress(node.cv, node.block, node.counter, node.blockLen, node.flags);
}

/** The output node of one chunk (at most 1024 bytes; the empty input is one empty chunk). */
function chunkOutput(chunk: Uint8Array, chunkCounter: number): OutputNode {
  let cv: Uint32Array = IV;
  const blocks = Math.max(1, Math.ceil(chunk.length / BLOCK_LEN));
  for (let b = 0; b < blocks - 1; b++) {
    const flags = b === 0 ? CHUNK_START : 0;
    cv = compress(cv, blockWords(chunk.subarray(b * BLOCK_LEN, (b + 1) * BLOCK_LEN)), chunkCounter, BLOCK_LEN, flags);
  }
  const last = chunk.subarray((blocks - 1) * BLOCK_LEN);
  return { cv, block: blockWords(last), counter: chunkCounter, blockLen: last.length, flags: (blocks === 1 ? CHUNK_START : 0) | CHUNK_END };
}

function parentOutput(left: Uint32Array, right: Uint32Array): OutputNode {
  const block = new Uint32Array(16);
  block.set(left, 0);
  block.set(right, 8);
  return { cv: IV, block, counter: 0, blockLen: BLOCK_LEN, flags: PARENT };
}

/** The 32-byte BLAKE3 hash of `input`. */
export function blake3(input: Uint8Array | string): Uint8Array {
  const bytes = typeof input === 'string' ? new TextEncoder().encode(input) : input;
  const chunks = Math.max(1, Math.ceil(bytes.length / CHUNK_LEN));
  const stack: Uint32Array[] = [];
  // Every chunk but the last is merged into the stack as soon as it is complete: a subtree is
  // closed whenever the running chunk count has a trailing zero bit (the spec's lazy merging).
  for (let c = 0; c < chunks - 1; c++) {
    let cv = chainingValue(chunkOutput(bytes.subarray(c * CHUNK_LEN, (c + 1) * CHUNK_LEN), c));
    let total = c + 1;
    while ((total & 1) === 0) {
      cv = chainingValue(parentOutput(stack.pop() as Uint32Array, cv));
      total >>= 1;
    }
    stack.push(cv);
  }
  let node = chunkOutput(bytes.subarray((chunks - 1) * CHUNK_LEN), chunks - 1);
  while (stack.length > 0) node = parentOutput(stack.pop() as Uint32Array, chainingValue(node));
  const words = compress(node.cv, node.block, 0, node.blockLen, node.flags | ROOT);
  const out = new Uint8Array(OUT_LEN);
  for (let i = 0; i < OUT_LEN; i++) out[i] = ((words[i >> 2] as number) >>> (8 * (i & 3))) & 0xff;
  return out;
}

/** BLAKE3 as lowercase hex. */
export function blake3Hex(input: Uint8Array | string): string {
  return Buffer.from(blake3(input)).toString('hex');
}
