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

Test(kv_cache, addressing) {
    struct qwen3_config c = fixture_tiny_config();
    struct kv_cache kv;
    struct fr_err err = {{0}};
    cr_assert_eq(kv_cache_alloc(&kv, &c, 10, FR_DTYPE_F32, &err), 0, "%s", err.msg);
    size_t pos_bytes = 2 * 32 * 4;
    cr_expect_eq(kv.pos_bytes, pos_bytes);
    cr_expect_eq((unsigned char *)kv_cache_k(&kv, 1, 3) - (unsigned char *)kv.k,
                 (ptrdiff_t)((10 + 3) * pos_bytes));
    cr_expect_eq((unsigned char *)kv_cache_v(&kv, 0, 9) - (unsigned char *)kv.v, (ptrdiff_t)(9 * pos_bytes));
    /* the last position of the last layer is writable (ASan checks the bound) */
    memset(kv_cache_v(&kv, 1, 9), 0, pos_bytes);
    kv_cache_free(&kv);
    cr_expect_null(kv.k);
}

Test(kv_cache, fill_random) {
    struct qwen3_config c = fixture_tiny_config();
    struct kv_cache a, b;
    cr_assert_eq(kv_cache_alloc(&a, &c, 8, FR_DTYPE_BF16, NULL), 0);
    cr_assert_eq(kv_cache_alloc(&b, &c, 8, FR_DTYPE_BF16, NULL), 0);
    kv_cache_fill_random(&a, 5, 11);
    kv_cache_fill_random(&b, 5, 11);
    size_t n = 5 * a.pos_bytes;
    for (int l = 0; l < 2; l++) {
        cr_expect_eq(memcmp(kv_cache_k(&a, l, 0), kv_cache_k(&b, l, 0), n), 0);
        cr_expect_eq(memcmp(kv_cache_v(&a, l, 0), kv_cache_v(&b, l, 0), n), 0);
        cr_expect_neq(memcmp(kv_cache_k(&a, l, 0), kv_cache_v(&a, l, 0), n), 0);
        /* positions from depth on are untouched (still the zero pages) */
        const unsigned char *rest = kv_cache_k(&a, l, 5);
        for (size_t i = 0; i < 3 * a.pos_bytes; i++) cr_assert_eq(rest[i], 0);
    }
    const uint16_t *k = kv_cache_k(&a, 1, 0);
    int nonzero = 0;
    for (int i = 0; i < 5 * 64; i++) {
        float f = bf16_to_f32(k[i]);
        cr_assert(f >= -1.0f && f <= 1.0f);
        nonzero += f != 0.0f;
    }
    cr_expect_gt(nonzero, 5 * 64 - 4);
    kv_cache_fill_random(&b, 5, 12);
    cr_expect_neq(memcmp(kv_cache_k(&a, 0, 0), kv_cache_k(&b, 0, 0), n), 0);
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
