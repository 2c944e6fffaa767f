/* SHA-256 (FIPS 180-4), streaming: the report's fingerprint of a weights file. */
#ifndef FR_SHA256_H
#define FR_SHA256_H

#include <stddef.h>
#include <stdint.h>

struct sha256 {
    uint32_t h[8];
    uint64_t bytes;
    unsigned char block[64];
    size_t fill;
};

void sha256_init(struct sha256 *s);
void sha256_update(struct sha256 *s, const void *data, size_t n);
/* Finishes and writes the digest as 64 lowercase hex digits and a NUL. */
void sha256_final_hex(struct sha256 *s, char hex[65]);

#endif
