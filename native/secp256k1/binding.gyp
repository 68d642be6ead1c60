# The native secp256k1 addon (see secp256k1.c). scripts/build.mjs builds it with npm's node-gyp;
# it links the system libsecp256k1 (Debian: libsecp256k1-dev, 0.2.0 or newer).
{
  "targets": [
    {
      "target_name": "secp256k1",
      "sources": ["secp256k1.c"],
      # N-API 8 is in every Node >= 12.22: the addon is ABI-stable across Node versions.
      "defines": ["NAPI_VERSION=8"],
      "cflags": ["-Wall", "-Wextra", "-Wno-unused-parameter"],
      "libraries": ["-lsecp256k1"]
    }
  ]
}
