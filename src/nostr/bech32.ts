/**
 * Bech32 encoding (BIP-173) of a human-readable part and bytes: what NIP-19 npubs are. Written for
 * the hot path: every push names its receiver as an npub, and a fan-out names 100,000 of them, so
 * this avoids the general radix conversion of a library encoder (checked against it in tests).
 * Decoding stays with nostr-tools, where speed does not matter.
 */

const CHARSET = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l';
const GENERATOR = [0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3];

function polymodStep(checksum: number, value: number): number {
  const top = checksum >>> 25;
  let next = ((checksum & 0x1ffffff) << 5) ^ value;
  for (let i = 0; i < 5; i++) if ((top >>> i) & 1) next ^= GENERATOR[i] as number;
  return next;
}

/** `hrp` + "1" + the 5-bit groups of `bytes` + the 6-character checksum. `hrp` must be lower-case ASCII. */
export function bech32Encode(hrp: string, bytes: Uint8Array): string {
  let checksum = 1;
  for (let i = 0; i < hrp.length; i++) checksum = polymodStep(checksum, hrp.charCodeAt(i) >>> 5);
  checksum = polymodStep(checksum, 0);
  for (let i = 0; i < hrp.length; i++) checksum = polymodStep(checksum, hrp.charCodeAt(i) & 31);

  let out = `${hrp}1`;
  let accumulator = 0;
  let bits = 0;
  for (const byte of bytes) {
    accumulator = (accumulator << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      const group = (accumulator >>> bits) & 31;
      checksum = polymodStep(checksum, group);
      out += CHARSET[group];
    }
  }
  if (bits > 0) {
    const group = (accumulator << (5 - bits)) & 31;
    checksum = polymodStep(checksum, group);
    out += CHARSET[group];
  }
  for (let i = 0; i < 6; i++) checksum = polymodStep(checksum, 0);
  checksum ^= 1;
  for (let i = 0; i < 6; i++) out += CHARSET[(checksum >>> (5 * (5 - i))) & 31];
  return out;
}
