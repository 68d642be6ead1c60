{
  "targets": [
    {
      "target_name": "nostr_push_secp256k1",
      "sources": ["secp256k1_addon.c"],
      "libraries": ["-lsecp256k1"],
      "cflags": ["-O2", "-Wall", "-Wextra"]
    }
  ]
}
