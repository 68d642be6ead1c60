/*
 * nostr-push's native secp256k1: BIP-340 verification and x-only ECDH through the system
 * libsecp256k1, as a Node-API addon (src/nostr/secp256k1.ts loads it, and falls back to
 * tiny-secp256k1's WASM build of the same library when it is missing).
 *
 *   verifySchnorrHex(idHex, pubkeyHex, sigHex) -> boolean
 *   xonlySharedX(secret, peerXonly)             -> Uint8Array(32) | null
 *
 * Every argument is checked before libsecp256k1 sees it: a value of the wrong type or length
 * throws a TypeError, and nothing a caller passes can make libsecp256k1 reach its abort paths.
 *
 * Context-aware (NAPI_MODULE_INIT, no static JS state), so worker threads load it too. The one
 * libsecp256k1 context is process-wide: created once, never changed afterwards, and only passed
 * as `const` to functions the library documents as safe to call concurrently. It lives as long as
 * the process, so there is nothing to clean up when a worker's environment goes away.
 */
#include <node_api.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <secp256k1.h>
#include <secp256k1_ecdh.h>
#include <secp256k1_extrakeys.h>
#include <secp256k1_schnorrsig.h>

/* Lengths in bytes; hex strings have twice as many characters. */
#define EVENT_ID_BYTES 32
#define XONLY_BYTES 32
#define SIGNATURE_BYTES 64
#define SECRET_BYTES 32

static secp256k1_context *shared_context = NULL;
static pthread_once_t shared_context_once = PTHREAD_ONCE_INIT;

/*
 * libsecp256k1 calls this instead of aborting when an API contract is broken (a NULL pointer,
 * say). The checks in this file rule that out, so it can only fire on a bug here; a wrong
 * `false` or `null` is then a better outcome than a dead service. The call returns 0 after it.
 */
static void ignore_illegal_argument(const char *message, void *data) {
  (void)message;
  (void)data;
}

static void create_shared_context(void) {
  /* Verification and ECDH need no signing tables and use no blinding (ECDH multiplies in
   * constant time without the context's randomisation), so a plain context is all they need. */
  secp256k1_context *context = secp256k1_context_create(SECP256K1_CONTEXT_NONE);
  if (context == NULL) return;
  secp256k1_context_set_illegal_callback(context, ignore_illegal_argument, NULL);
  shared_context = context;
}

/* Returns NULL to JS with an exception pending: the one from Node-API, or a generic Error. */
static napi_value fail(napi_env env, const char *what) {
  bool pending = false;
  if (napi_is_exception_pending(env, &pending) != napi_ok || !pending) napi_throw_error(env, NULL, what);
  return NULL;
}

#define CHECK_NAPI(env, call, what) \
  do {                              \
    if ((call) != napi_ok) return fail((env), (what)); \
  } while (0)

static int hex_digit(uint16_t unit) {
  if (unit >= '0' && unit <= '9') return unit - '0';
  if (unit >= 'a' && unit <= 'f') return unit - 'a' + 10;
  return -1;
}

/* Lowercase hex only, as NIP-01 writes it. 1 when all `bytes` decoded, 0 otherwise. */
static int decode_lower_hex(const uint16_t *units, size_t bytes, unsigned char *out) {
  for (size_t i = 0; i < bytes; i++) {
    int high = hex_digit(units[2 * i]);
    int low = hex_digit(units[2 * i + 1]);
    if (high < 0 || low < 0) return 0;
    out[i] = (unsigned char)((high << 4) | low);
  }
  return 1;
}

/*
 * Copies a string argument of exactly `chars` UTF-16 code units (its JS `length`) into `units`,
 * which holds chars + 2. Reading UTF-16 keeps every character distinct: a Latin-1 read would fold
 * U+0161 into 'a', a UTF-8 one would measure length in bytes. 1 on success; 0 with a TypeError
 * pending when the value is not a string or has another length.
 */
static int read_hex_argument(napi_env env, napi_value value, size_t chars, uint16_t *units, const char *message) {
  napi_valuetype type;
  size_t copied = 0;
  if (napi_typeof(env, value, &type) != napi_ok || type != napi_string) goto wrong;
  /* One unit of room past `chars` tells a longer string (truncated to chars + 1) from an exact one. */
  if (napi_get_value_string_utf16(env, value, (char16_t *)units, chars + 2, &copied) != napi_ok) goto wrong;
  if (copied != chars) goto wrong;
  return 1;
wrong:
  napi_throw_type_error(env, NULL, message);
  return 0;
}

/*
 * verifySchnorrHex(idHex: string, pubkeyHex: string, sigHex: string): boolean
 *
 * Whether `sigHex` is a valid BIP-340 signature of the 32-byte message `idHex` by the x-only key
 * `pubkeyHex`. Strings of 64, 64 and 128 characters, else a TypeError; false when one of them is
 * not lowercase hex or the key is not an x coordinate on the curve.
 */
static napi_value verify_schnorr_hex(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  CHECK_NAPI(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL), "verifySchnorrHex: cannot read arguments");
  /* Missing arguments read as undefined and fail the string checks. */
  uint16_t id_units[2 * EVENT_ID_BYTES + 2];
  uint16_t pubkey_units[2 * XONLY_BYTES + 2];
  uint16_t sig_units[2 * SIGNATURE_BYTES + 2];
  if (!read_hex_argument(env, argv[0], 2 * EVENT_ID_BYTES, id_units, "verifySchnorrHex: idHex must be a string of 64 hex characters")) return NULL;
  if (!read_hex_argument(env, argv[1], 2 * XONLY_BYTES, pubkey_units, "verifySchnorrHex: pubkeyHex must be a string of 64 hex characters")) return NULL;
  if (!read_hex_argument(env, argv[2], 2 * SIGNATURE_BYTES, sig_units, "verifySchnorrHex: sigHex must be a string of 128 hex characters")) return NULL;

  unsigned char id[EVENT_ID_BYTES];
  unsigned char pubkey_bytes[XONLY_BYTES];
  unsigned char sig[SIGNATURE_BYTES];
  secp256k1_xonly_pubkey pubkey;
  int valid = decode_lower_hex(id_units, EVENT_ID_BYTES, id) &&
              decode_lower_hex(pubkey_units, XONLY_BYTES, pubkey_bytes) &&
              decode_lower_hex(sig_units, SIGNATURE_BYTES, sig) &&
              secp256k1_xonly_pubkey_parse(shared_context, &pubkey, pubkey_bytes) &&
              secp256k1_schnorrsig_verify(shared_context, sig, id, EVENT_ID_BYTES, &pubkey);

  napi_value result;
  CHECK_NAPI(env, napi_get_boolean(env, valid == 1, &result), "verifySchnorrHex: cannot create a boolean");
  return result;
}

/* 1 with `data` pointing at the bytes when `value` is a Uint8Array (a Buffer is one) of `bytes`. */
static int read_bytes_argument(napi_env env, napi_value value, size_t bytes, const unsigned char **data, const char *message) {
  bool is_typed_array = false;
  napi_typedarray_type type;
  size_t length = 0;
  void *start = NULL;
  if (napi_is_typedarray(env, value, &is_typed_array) != napi_ok || !is_typed_array) goto wrong;
  /* `start` is already offset to the view's first byte; a detached view has length 0. */
  if (napi_get_typedarray_info(env, value, &type, &length, &start, NULL, NULL) != napi_ok) goto wrong;
  if (type != napi_uint8_array || length != bytes || start == NULL) goto wrong;
  *data = (const unsigned char *)start;
  return 1;
wrong:
  napi_throw_type_error(env, NULL, message);
  return 0;
}

/* The ECDH "hash": the shared point's x coordinate itself, which is what NIP-44 feeds HKDF. */
static int copy_x_coordinate(unsigned char *output, const unsigned char *x32, const unsigned char *y32, void *data) {
  (void)y32;
  (void)data;
  memcpy(output, x32, 32);
  return 1;
}

/*
 * xonlySharedX(secret: Uint8Array(32), peerXonly: Uint8Array(32)): Uint8Array(32) | null
 *
 * The x coordinate of secret·P, where P is the curve point with x coordinate `peerXonly` and even
 * y (BIP-340's lift_x; the x of the product is the same for either y). Null when `peerXonly` is
 * not the x of a curve point (including x >= p) or `secret` is not a scalar in [1, n-1]. Other
 * types or lengths throw a TypeError. The result is a fresh array the caller owns.
 */
static napi_value xonly_shared_x(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  CHECK_NAPI(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL), "xonlySharedX: cannot read arguments");
  const unsigned char *secret = NULL;
  const unsigned char *peer = NULL;
  if (!read_bytes_argument(env, argv[0], SECRET_BYTES, &secret, "xonlySharedX: secret must be a Uint8Array of 32 bytes")) return NULL;
  if (!read_bytes_argument(env, argv[1], XONLY_BYTES, &peer, "xonlySharedX: peerXonly must be a Uint8Array of 32 bytes")) return NULL;

  /* lift_x through the compressed encoding: 0x02 names the even-y point of that x. */
  unsigned char compressed[1 + XONLY_BYTES];
  compressed[0] = 0x02;
  memcpy(compressed + 1, peer, XONLY_BYTES);
  secp256k1_pubkey point;
  napi_value result;
  if (!secp256k1_ec_pubkey_parse(shared_context, &point, compressed, sizeof compressed)) {
    CHECK_NAPI(env, napi_get_null(env, &result), "xonlySharedX: cannot create null");
    return result;
  }

  /* The x goes straight into the result's memory: no copy of the shared secret is left behind. */
  napi_value buffer;
  void *output = NULL;
  CHECK_NAPI(env, napi_create_arraybuffer(env, 32, &output, &buffer), "xonlySharedX: cannot allocate the result");
  if (!secp256k1_ecdh(shared_context, (unsigned char *)output, &point, secret, copy_x_coordinate, NULL)) {
    /* An invalid secret: libsecp256k1 still ran with a stand-in scalar, so clear what it wrote. */
    memset(output, 0, 32);
    CHECK_NAPI(env, napi_get_null(env, &result), "xonlySharedX: cannot create null");
    return result;
  }
  CHECK_NAPI(env, napi_create_typedarray(env, napi_uint8_array, 32, buffer, 0, &result), "xonlySharedX: cannot create the result");
  return result;
}

NAPI_MODULE_INIT() {
  pthread_once(&shared_context_once, create_shared_context);
  if (shared_context == NULL) return fail(env, "libsecp256k1: secp256k1_context_create failed");
  napi_property_descriptor properties[] = {
      {"verifySchnorrHex", NULL, verify_schnorr_hex, NULL, NULL, NULL, napi_enumerable, NULL},
      {"xonlySharedX", NULL, xonly_shared_x, NULL, NULL, NULL, napi_enumerable, NULL},
  };
  CHECK_NAPI(env, napi_define_properties(env, exports, sizeof properties / sizeof properties[0], properties), "cannot define the exports");
  return exports;
}
