/**
 * The official NIP-44 vectors (paulmillr/nip44), read where the project keeps shared test data and
 * never copied into the repository. The checksum is the one printed in NIP-44.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const VECTORS_PATH = fileURLToPath(new URL('../../../shared/testdata/nip44.vectors.json', import.meta.url));
export const VECTORS_SHA256 = '269ed0f69e4c192512cc779e78c555090cebc7c785b609e338a62afc3ce25040';

export interface Vectors {
  v2: {
    valid: {
      get_conversation_key: Array<{ sec1: string; pub2: string; conversation_key: string }>;
      get_message_keys: {
        conversation_key: string;
        keys: Array<{ nonce: string; chacha_key: string; chacha_nonce: string; hmac_key: string }>;
      };
      calc_padded_len: Array<[number, number]>;
      encrypt_decrypt: Array<{
        sec1: string;
        sec2: string;
        conversation_key: string;
        nonce: string;
        plaintext: string;
        payload: string;
      }>;
      encrypt_decrypt_long_msg: Array<{
        conversation_key: string;
        nonce: string;
        pattern: string;
        repeat: number;
        plaintext_sha256: string;
        payload_sha256: string;
      }>;
    };
    invalid: {
      encrypt_msg_lengths: number[];
      get_conversation_key: Array<{ sec1: string; pub2: string; note: string }>;
      decrypt: Array<{ conversation_key: string; nonce: string; plaintext: string; payload: string; note: string }>;
    };
  };
}

export function loadVectors(): { raw: Buffer; vectors: Vectors } {
  if (!existsSync(VECTORS_PATH)) {
    assert.fail(
      `NIP-44 test vectors not found at ${VECTORS_PATH}. They live in the shared test data folder ` +
        'beside the repository (shared/testdata/nip44.vectors.json) and are never copied into it.',
    );
  }
  const raw = readFileSync(VECTORS_PATH);
  return { raw, vectors: JSON.parse(raw.toString('utf8')) as Vectors };
}

