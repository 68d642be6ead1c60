/*
 * nostr-push's binding to the system libsecp256k1 (Debian: libsecp256k1-dev): BIP-340 Schnorr
 * verification of Nostr event ids and the x-only ECDH that NIP-44 conversation keys start from.
 *
 * It exists for speed only: the same library compiled to WASM (tiny-secp256k1) is the fallback,
 * and `src/nostr/secp256k1.ts` chooses between them. Node-API, context-aware, so it loads in the
 * crypto worker threads too; one libsecp256k1 context is created once and only read afterwards
 * (verification and ECDH take a const context).
 *
 * Every argument is checked: a wrong type or length is a JS TypeError, never undefined behaviour.
 */
#include <node_api.h>
#include <pthread.h>
#include <string.h>
#include <secp256k1.h>
#include <secp256k1_ecdh.h>
#include <secp256k1_extrakeys.h>
#include <secp256k1_schnorrsig.h>

static secp256k1_context *context = NULL;
static pthread_once_t context_once = PTHREAD_ONCE_INIT;

static void create_context(void) {
  /* VERIFY rather than NONE: the flag libsecp256k1 versions before 0.2 also accept. */
  context = secp256k1_context_create(SECP256K1_CONTEXT_VERIFY);
}

/* Decodes exactly `bytes` octets of lowercase hex from `hex` (2 * bytes characters). */
static int decode_hex(const char *hex, unsigned char *out, size_t bytes) {
  for (size_t i = 0; i < bytes; i++) {
    int value = 0;
    for (int half = 0; half < 2; half++) {
      char c = hex[2 * i + half];
      int nibble;
      if (c >= '0' && c <= '9') nibble = c - '0';
      else if (c >= 'a' && c <= 'f') nibble = c - 'a' + 10;
      else return 0;
      value = (value << 4) | nibble;
    }
    out[i] = (unsigned char)value;
  }
  return 1;
}

/*
 * Reads a JS string argument of exactly `chars` latin1 characters into `buffer` (chars + 1).
 * Returns 1 when it has that length, 0 when it is a string of another length; throws for a
 * non-string.
 */
static int read_fixed_string(napi_env env, napi_value value, char *buffer, size_t chars, int *ok) {
  napi_valuetype type;
  *ok = 0;
  if (napi_typeof(env, value, &type) != napi_ok || type != napi_string) {
    napi_throw_type_error(env, NULL, "expected a hex string");
    return 0;
  }
  size_t length = 0;
  if (napi_get_value_string_latin1(env, value, NULL, 0, &length) != napi_ok) return 0;
  *ok = 1;
  if (length != chars) return 0;
  if (napi_get_value_string_latin1(env, value, buffer, chars + 1, &length) != napi_ok) return 0;
  return 1;
}

static napi_value boolean(napi_env env, int value) {
  napi_value result;
  napi_get_boolean(env, value != 0, &result);
  return result;
}

/* verifySchnorrHex(idHex: string, pubkeyHex: string, sigHex: string): boolean */
static napi_value verify_schnorr_hex(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok) return NULL;
  if (argc != 3) {
    napi_throw_type_error(env, NULL, "verifySchnorrHex takes (idHex, pubkeyHex, sigHex)");
    return NULL;
  }
  char id_hex[65], pubkey_hex[65], sig_hex[129];
  int ok;
  int lengths_right = read_fixed_string(env, argv[0], id_hex, 64, &ok);
  if (!ok) return NULL;
  lengths_right &= read_fixed_string(env, argv[1], pubkey_hex, 64, &ok);
  if (!ok) return NULL;
  lengths_right &= read_fixed_string(env, argv[2], sig_hex, 128, &ok);
  if (!ok) return NULL;
  if (!lengths_right) return boolean(env, 0);

  unsigned char id[32], pubkey_bytes[32], sig[64];
  if (!decode_hex(id_hex, id, 32) || !decode_hex(pubkey_hex, pubkey_bytes, 32) || !decode_hex(sig_hex, sig, 64)) return boolean(env, 0);
  secp256k1_xonly_pubkey pubkey;
  /* An x with no point on the curve fails here: not a valid signature by anyone. */
  if (!secp256k1_xonly_pubkey_parse(context, &pubkey, pubkey_bytes)) return boolean(env, 0);
  return boolean(env, secp256k1_schnorrsig_verify(context, sig, id, 32, &pubkey));
}

/* The ECDH "hash" that keeps the shared point's x coordinate as it is (NIP-44 hashes it itself). */
static int copy_x(unsigned char *output, const unsigned char *x32, const unsigned char *y32, void *data) {
  (void)y32;
  (void)data;
  memcpy(output, x32, 32);
  return 1;
}

/* Copies a Uint8Array (or Buffer) argument of exactly `bytes` octets; throws otherwise. */
static int read_bytes(napi_env env, napi_value value, unsigned char *out, size_t bytes, const char *what) {
  napi_typedarray_type type;
  size_t length;
  void *data;
  napi_value buffer;
  size_t offset;
  bool is_typed_array = false;
  if (napi_is_typedarray(env, value, &is_typed_array) != napi_ok || !is_typed_array ||
      napi_get_typedarray_info(env, value, &type, &length, &data, &buffer, &offset) != napi_ok || type != napi_uint8_array ||
      length != bytes) {
    napi_throw_type_error(env, NULL, what);
    return 0;
  }
  memcpy(out, data, bytes);
  return 1;
}

/* xonlySharedX(secret: Uint8Array(32), peerXonly: Uint8Array(32)): Uint8Array(32) | null */
static napi_value xonly_shared_x(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok) return NULL;
  if (argc != 2) {
    napi_throw_type_error(env, NULL, "xonlySharedX takes (secret, peerXonly)");
    return NULL;
  }
  unsigned char secret[32], compressed[33], shared[32];
  if (!read_bytes(env, argv[0], secret, 32, "secret must be a 32-byte Uint8Array")) return NULL;
  if (!read_bytes(env, argv[1], compressed + 1, 32, "peerXonly must be a 32-byte Uint8Array")) return NULL;
  /* An x-only key names the point with even y (BIP-340); the shared x is the same for either y. */
  compressed[0] = 0x02;
  napi_value result;
  secp256k1_pubkey peer;
  if (!secp256k1_ec_pubkey_parse(context, &peer, compressed, 33) || !secp256k1_ecdh(context, shared, &peer, secret, copy_x, NULL)) {
    memset(secret, 0, sizeof secret);
    napi_get_null(env, &result);
    return result;
  }
  memset(secret, 0, sizeof secret);
  void *data;
  napi_value array_buffer;
  if (napi_create_arraybuffer(env, 32, &data, &array_buffer) != napi_ok) return NULL;
  memcpy(data, shared, 32);
  if (napi_create_typedarray(env, napi_uint8_array, 32, array_buffer, 0, &result) != napi_ok) return NULL;
  return result;
}

NAPI_MODULE_INIT() {
  pthread_once(&context_once, create_context);
  if (context == NULL) {
    napi_throw_error(env, NULL, "libsecp256k1: could not create a context");
    return NULL;
  }
  napi_property_descriptor properties[] = {
      {"verifySchnorrHex", NULL, verify_schnorr_hex, NULL, NULL, NULL, napi_enumerable, NULL},
      {"xonlySharedX", NULL, xonly_shared_x, NULL, NULL, NULL, napi_enumerable, NULL},
  };
  napi_define_properties(env, exports, sizeof properties / sizeof properties[0], properties);
  return exports;
}
