/**
 * The static Huffman code of HPACK (RFC 7541 §5.2, Appendix B).
 *
 * The code is canonical: within one bit length, codes are consecutive in symbol order, and each
 * length starts where the previous one ended, shifted. So the code lengths alone define it, and
 * only they are written down here (Appendix B's `len` column, symbols 0–255 then EOS = 256); the
 * codes are derived from them once. `huffman.test.ts` checks the derivation against codes taken
 * from the appendix and against the examples of Appendix C.
 */

/** Appendix B's bit length of each symbol's code, 16 symbols a row; index 256 is EOS. */
// prettier-ignore
const CODE_LENGTHS: readonly number[] = [
  13, 23, 28, 28, 28, 28, 28, 28, 28, 24, 30, 28, 28, 30, 28, 28, //   0–15
  28, 28, 28, 28, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 28, //  16–31
   6, 10, 10, 12, 13,  6,  8, 11, 10, 10,  8, 11,  8,  6,  6,  6, //  32–47  ' ' … '/'
   5,  5,  5,  6,  6,  6,  6,  6,  6,  6,  7,  8, 15,  6, 12, 10, //  48–63  '0' … '?'
  13,  6,  7,  7,  7,  7,  7,  7,  7,  7,  7,  7,  7,  7,  7,  7, //  64–79  '@' … 'O'
   7,  7,  7,  7,  7,  7,  7,  7,  8,  7,  8, 13, 19, 13, 14,  6, //  80–95  'P' … '_'
  15,  5,  6,  5,  6,  5,  6,  6,  6,  5,  7,  7,  6,  6,  6,  5, //  96–111 '`' … 'o'
   6,  7,  6,  5,  5,  6,  7,  7,  7,  7,  7, 15, 11, 14, 13, 28, // 112–127 'p' … DEL
  20, 22, 20, 20, 22, 22, 22, 23, 22, 23, 23, 23, 23, 23, 24, 23, // 128–143
  24, 24, 22, 23, 24, 23, 23, 23, 23, 21, 22, 23, 22, 23, 23, 24, // 144–159
  22, 21, 20, 22, 22, 23, 23, 21, 23, 22, 22, 24, 21, 22, 23, 23, // 160–175
  21, 21, 22, 21, 23, 22, 23, 23, 20, 22, 22, 22, 23, 22, 22, 23, // 176–191
  26, 26, 20, 19, 22, 23, 22, 25, 26, 26, 26, 27, 27, 26, 24, 25, // 192–207
  19, 21, 26, 27, 27, 26, 27, 24, 21, 21, 26, 26, 28, 27, 27, 27, // 208–223
  20, 24, 20, 21, 22, 21, 21, 23, 22, 22, 25, 25, 24, 24, 26, 23, // 224–239
  26, 27, 26, 26, 27, 27, 27, 27, 27, 28, 27, 27, 27, 27, 27, 26, // 240–255
  30, // EOS
];

/** The end-of-string symbol; it never appears in a string, and its prefix pads the last octet. */
export const EOS_SYMBOL = 256;
/** Longest code (EOS and a few control bytes). */
const MAX_CODE_BITS = 30;

/** Code of each symbol, right-aligned in `CODE_BITS[symbol]` bits. */
export const CODES: Uint32Array = new Uint32Array(CODE_LENGTHS.length);
export const CODE_BITS: Uint8Array = Uint8Array.from(CODE_LENGTHS);

/**
 * Canonical decoding tables, per bit length L: the first code of that length, how many codes
 * have it, and where its symbols start in {@link SYMBOLS_BY_CODE}.
 */
const FIRST_CODE = new Int32Array(MAX_CODE_BITS + 1);
const COUNT = new Int32Array(MAX_CODE_BITS + 1);
const FIRST_INDEX = new Int32Array(MAX_CODE_BITS + 1);
const SYMBOLS_BY_CODE = new Uint16Array(CODE_LENGTHS.length);

{
  const order = CODE_LENGTHS.map((_, symbol) => symbol).sort((a, b) => (CODE_BITS[a] as number) - (CODE_BITS[b] as number) || a - b);
  let code = 0;
  let bits = CODE_BITS[order[0] as number] as number;
  order.forEach((symbol, index) => {
    const length = CODE_BITS[symbol] as number;
    code *= 2 ** (length - bits);
    bits = length;
    if (COUNT[length] === 0) {
      FIRST_CODE[length] = code;
      FIRST_INDEX[length] = index;
    }
    COUNT[length] = (COUNT[length] as number) + 1;
    CODES[symbol] = code;
    SYMBOLS_BY_CODE[index] = symbol;
    code++;
  });
  // A complete prefix code ends exactly at 2^bits: the last code (EOS) is all ones.
  if (code !== 2 ** bits) throw new Error('HPACK Huffman code lengths do not form a complete prefix code');
}

/** Octets the Huffman coding of `bytes[start, end)` takes, padding included. */
export function huffmanEncodedLength(bytes: Uint8Array, start = 0, end = bytes.length): number {
  let bits = 0;
  for (let i = start; i < end; i++) bits += CODE_BITS[bytes[i] as number] as number;
  return Math.ceil(bits / 8);
}

/**
 * Writes the Huffman coding of `bytes` into `out` at `offset`, padded with the most significant
 * bits of EOS (ones) to an octet boundary; returns the offset after it. `out` must have room for
 * {@link huffmanEncodedLength} octets.
 */
export function huffmanEncode(bytes: Uint8Array, out: Uint8Array, offset: number): number {
  // 32-bit integer arithmetic: fewer than 8 bits wait between symbols, so a code of up to 24 bits
  // fits beside them; the few longer codes (25–30 bits, rare octets) go in two halves.
  let pending = 0;
  let pendingBits = 0;
  let at = offset;
  for (let i = 0; i < bytes.length; i++) {
    const symbol = bytes[i] as number;
    const length = CODE_BITS[symbol] as number;
    const code = CODES[symbol] as number;
    if (length <= 24) {
      pending = (pending << length) | code;
      pendingBits += length;
    } else {
      pending = (pending << (length - 16)) | (code >>> 16);
      pendingBits += length - 16;
      while (pendingBits >= 8) {
        pendingBits -= 8;
        out[at++] = (pending >>> pendingBits) & 0xff;
      }
      pending = ((pending & ((1 << pendingBits) - 1)) << 16) | (code & 0xffff);
      pendingBits += 16;
    }
    while (pendingBits >= 8) {
      pendingBits -= 8;
      out[at++] = (pending >>> pendingBits) & 0xff;
    }
    pending &= (1 << pendingBits) - 1;
  }
  if (pendingBits > 0) out[at++] = (pending << (8 - pendingBits)) | (0xff >> pendingBits);
  return at;
}

/** Why a Huffman-coded string is refused (a COMPRESSION_ERROR for the connection). */
export class HuffmanDecodeError extends Error {
  override readonly name = 'HuffmanDecodeError';
}

/**
 * Decodes `input[start, end)` into octets. Refuses, as §5.2 requires, padding longer than 7 bits,
 * padding that is not the most significant bits of EOS, and an EOS symbol inside the string.
 * `maxOutput` bounds the result (a code is at least 5 bits, so the output can exceed the input
 * by 60 %); past it the decode fails.
 */
export function huffmanDecode(input: Uint8Array, start: number, end: number, maxOutput: number): Buffer {
  const out = Buffer.allocUnsafe(Math.min(maxOutput, Math.ceil(((end - start) * 8) / 5)));
  let written = 0;
  let code = 0;
  let length = 0;
  for (let i = start; i < end; i++) {
    const octet = input[i] as number;
    for (let bit = 7; bit >= 0; bit--) {
      code = code * 2 + ((octet >> bit) & 1);
      length++;
      const offset = code - (FIRST_CODE[length] as number);
      if (offset >= 0 && offset < (COUNT[length] as number)) {
        const symbol = SYMBOLS_BY_CODE[(FIRST_INDEX[length] as number) + offset] as number;
        if (symbol === EOS_SYMBOL) throw new HuffmanDecodeError('EOS inside a Huffman-coded string');
        if (written >= out.length) throw new HuffmanDecodeError(`Huffman-coded string longer than ${maxOutput} octets`);
        out[written++] = symbol;
        code = 0;
        length = 0;
      } else if (length >= MAX_CODE_BITS) {
        throw new HuffmanDecodeError('invalid Huffman code');
      }
    }
  }
  if (length > 7) throw new HuffmanDecodeError('Huffman padding longer than 7 bits');
  if (code !== 2 ** length - 1) throw new HuffmanDecodeError('Huffman padding is not the prefix of EOS');
  return out.subarray(0, written);
}
