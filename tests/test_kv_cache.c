/* kv_cache: sizes (114,688 bytes per cached token for Qwen3-0.6B in bf16), addressing, the seeded fill and
 * the memory refusal. */
#include <criterion/criterion.h>
#include <string.h>

#include "model/cost.h"
#include "model/kv_cache.h"
#include "tests/model_fixtures.h"

Test(kv_cache, bytes_per_token_of_qwen3_06b) {
    struct qwen3_config c = fixture_qwen3_06b_config();
    cr_expect_eq(kv_cache_bytes(&c, 1, FR_DTYPE_BF16), 114688u);
    cr_expect_eq(kv_cache_bytes(&c, 1000, FR_DTYPE_F32), 2u * 114688u * 1000u);
    cr_expect_eq(kv_cache_bytes(&c, 0, FR_DTYPE_BF16), 0u);
    /* the cost model's per-position KV bytes are what the cache allocates per position */
    cr_expect_eq(cost_kv_bytes_per_position(&c, FR_DTYPE_BF16), (double)kv_cache_bytes(&c, 1, FR_DTYPE_BF16));
    cr_expect_eq(cost_kv_bytes_per_position(&c, FR_DTYPE_F32), (double)kv_cache_bytes(&c, 1, FR_DTYPE_F32));
}

Test(kv_cache, addressing_is_head_major) {
    struct qwen3_config c = fixture_tiny_config(); /* 2 layers, 2 KV heads of 32 */
    struct kv_cache kv;
    struct fr_err err = {{0}};
    cr_assert_eq(kv_cache_alloc(&kv, &c, 10, FR_DTYPE_F32, &err), 0, "%s", err.msg);
    const ptrdiff_t row = 32 * 4, head = 10 * row, layer = 2 * head; /* a short cache: heads packed */
    cr_expect_eq(kv.row_bytes, (size_t)row);
    cr_expect_eq(kv.head_bytes, (size_t)head);
    cr_expect_eq(kv.layer_bytes, (size_t)layer);
    cr_expect_eq(kv_cache_head_stride(&kv), 10u * 32u);
    cr_expect_eq((unsigned char *)kv_cache_k(&kv, 1, 0, 3) - (unsigned char *)kv.k, layer + 3 * row);
    cr_expect_eq((unsigned char *)kv_cache_k(&kv, 1, 1, 3) - (unsigned char *)kv.k, layer + head + 3 * row);
    cr_expect_eq((unsigned char *)kv_cache_v(&kv, 0, 1, 9) - (unsigned char *)kv.v, head + 9 * row);
    /* the last position of the last head of the last layer is writable (ASan checks the bound) */
    memset(kv_cache_v(&kv, 1, 1, 9), 0, (size_t)row);
    kv_cache_free(&kv);
    cr_expect_null(kv.k);
}

/* From 64 KiB of rows a head, each head's rows start 256 bytes further into a 4 KiB page than the head
 * before's: 1000 rows of 128 bytes (31.25 pages) take 32 pages and 256 bytes. */
Test(kv_cache, long_heads_start_at_skewed_page_offsets) {
    struct qwen3_config c = fixture_tiny_config();
    struct kv_cache kv;
    struct fr_err err = {{0}};
    cr_assert_eq(kv_cache_alloc(&kv, &c, 1000, FR_DTYPE_F32, &err), 0, "%s", err.msg);
    const size_t head = 32 * 4096 + 256;
    cr_expect_eq(kv.head_bytes, head);
    cr_expect_eq(kv.layer_bytes, 2 * head);
    cr_expect_eq(kv_cache_head_stride(&kv), head / 4);
    for (int h = 0; h < 2; h++)
        cr_expect_eq((uintptr_t)kv_cache_k(&kv, 1, h, 0) % 4096,
                     (uintptr_t)kv.k % 4096 + (size_t)(2 + h) * 256 % 4096);
    memset(kv_cache_v(&kv, 1, 1, 999), 0, kv.row_bytes); /* the last row is inside the mapping (ASan) */
    kv_cache_free(&kv);
}

/* kv_cache_store puts head h's slice of k and v at row pos of head h, converted; kv_cache_copy moves a
 * range of positions of every layer and head and nothing else. */
Test(kv_cache, store_and_copy) {
    struct qwen3_config c = fixture_tiny_config();
    struct kv_cache a, b;
    cr_assert_eq(kv_cache_alloc(&a, &c, 6, FR_DTYPE_BF16, NULL), 0);
    cr_assert_eq(kv_cache_alloc(&b, &c, 9, FR_DTYPE_BF16, NULL), 0);
    float k[64], v[64];
    for (int i = 0; i < 64; i++) k[i] = (float)i, v[i] = -(float)i; /* exact in bf16 */
    kv_cache_store(&a, 1, 4, k, v);
    for (int h = 0; h < 2; h++)
        for (int d = 0; d < 32; d++) {
            cr_expect_eq(bf16_to_f32(((uint16_t *)kv_cache_k(&a, 1, h, 4))[d]), (float)(h * 32 + d));
            cr_expect_eq(bf16_to_f32(((uint16_t *)kv_cache_v(&a, 1, h, 4))[d]), -(float)(h * 32 + d));
        }
    kv_cache_fill_random(&a, 4, 3);
    kv_cache_copy(&b, &a, 1, 5);
    for (int l = 0; l < 2; l++)
        for (int h = 0; h < 2; h++) {
            cr_expect_eq(memcmp(kv_cache_k(&b, l, h, 1), kv_cache_k(&a, l, h, 1), 4 * a.row_bytes), 0);
            cr_expect_eq(memcmp(kv_cache_v(&b, l, h, 1), kv_cache_v(&a, l, h, 1), 4 * a.row_bytes), 0);
            const unsigned char *k0 = kv_cache_k(&b, l, h, 0), *k5 = kv_cache_k(&b, l, h, 5);
            for (size_t i = 0; i < b.row_bytes; i++) cr_assert(k0[i] == 0 && k5[i] == 0, "l %d h %d", l, h);
        }
    kv_cache_copy(&b, &a, 3, 3); /* an empty range copies nothing (position 0 of b stays zero) */
    kv_cache_copy(&b, &a, 3, 0);
    const unsigned char *b0 = kv_cache_k(&b, 0, 0, 0);
    for (size_t i = 0; i < b.row_bytes; i++) cr_assert(b0[i] == 0);
    kv_cache_free(&a);
    kv_cache_free(&b);
}

Test(kv_cache, fill_random) {
    struct qwen3_config c = fixture_tiny_config();
    struct kv_cache a, b;
    cr_assert_eq(kv_cache_alloc(&a, &c, 8, FR_DTYPE_BF16, NULL), 0);
    cr_assert_eq(kv_cache_alloc(&b, &c, 8, FR_DTYPE_BF16, NULL), 0);
    kv_cache_fill_random(&a, 5, 11);
    kv_cache_fill_random(&b, 5, 11);
    size_t n = 5 * a.row_bytes;
    for (int l = 0; l < 2; l++)
        for (int h = 0; h < 2; h++) {
            cr_expect_eq(memcmp(kv_cache_k(&a, l, h, 0), kv_cache_k(&b, l, h, 0), n), 0);
            cr_expect_eq(memcmp(kv_cache_v(&a, l, h, 0), kv_cache_v(&b, l, h, 0), n), 0);
            cr_expect_neq(memcmp(kv_cache_k(&a, l, h, 0), kv_cache_v(&a, l, h, 0), n), 0);
            cr_expect_neq(memcmp(kv_cache_k(&a, l, h, 0), kv_cache_k(&a, l, 1 - h, 0), n), 0);
            /* positions from depth on are untouched (still the zero pages) */
            const unsigned char *rest = kv_cache_k(&a, l, h, 5);
            for (size_t i = 0; i < 3 * a.row_bytes; i++) cr_assert_eq(rest[i], 0);
        }
    const uint16_t *k = kv_cache_k(&a, 1, 0, 0);
    int nonzero = 0;
    for (int i = 0; i < 5 * 32; i++) {
        float f = bf16_to_f32(k[i]);
        cr_assert(f >= -1.0f && f <= 1.0f);
        nonzero += f != 0.0f;
    }
    cr_expect_gt(nonzero, 5 * 32 - 4);
    kv_cache_fill_random(&b, 5, 12);
    cr_expect_neq(memcmp(kv_cache_k(&a, 0, 0, 0), kv_cache_k(&b, 0, 0, 0), n), 0);
    kv_cache_fill_random(&b, 100, 12); /* depth beyond the cache is clamped, not an overrun */
    kv_cache_free(&a);
    kv_cache_free(&b);
}

Test(kv_cache, refuses_too_large) {
    struct qwen3_config c = fixture_qwen3_06b_config();
    struct kv_cache kv;
    struct fr_err err = {{0}};
    c.n_kv_heads = 1 << 20;
    cr_expect_neq(kv_cache_alloc(&kv, &c, 1 << 30, FR_DTYPE_F32, &err), 0);
    cr_expect(strstr(err.msg, "needs") || strstr(err.msg, "overflow"), "%s", err.msg);
    cr_expect_null(kv.k);
    cr_expect_neq(kv_cache_alloc(&kv, &c, 0, FR_DTYPE_F32, &err), 0);
}
