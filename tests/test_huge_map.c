/* huge_map: zero-filled, writable mappings of any size, and the same pages for the KV cache as for the read
 * roof's array (the huge-page share of both read from /proc/self/smaps). */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "kernels/huge_map.h"
#include "model/kv_cache.h"
#include "roofline/ceilings.h"
#include "tests/model_fixtures.h"

Test(huge_map, zero_filled_and_writable) {
    size_t bytes = 3u << 20;
    unsigned char *p = huge_map_alloc(bytes);
    cr_assert_not_null(p);
    size_t nonzero = 0;
    for (size_t i = 0; i < bytes; i += 4096) nonzero += p[i] != 0;
    cr_expect_eq(nonzero, 0u);
    memset(p, 7, bytes);
    cr_expect_eq(p[bytes - 1], 7);
    huge_map_free(p, bytes);
    void *one = huge_map_alloc(0);
    cr_assert_not_null(one, "a size-0 request maps one byte");
    huge_map_free(one, 0);
    huge_map_free(NULL, 10);
}

/* Where this machine backs the read roof's array with huge pages, the KV cache gets them too: before, the
 * cache had 4 KiB pages and attention streamed it slower than the roof's read. */
Test(huge_map, kv_cache_pages_as_the_read_roof) {
    struct qwen3_config c = fixture_qwen3_06b_config();
    struct kv_cache kv;
    struct fr_err err = {{0}};
    int positions = 512; /* K: 28 layers x 512 positions x 2,048 bytes = 29 MB, fourteen 2 MiB pages */
    cr_assert_eq(kv_cache_alloc(&kv, &c, positions, FR_DTYPE_BF16, &err), 0, "%s", err.msg);
    size_t half = kv.layer_bytes * (size_t)kv.n_layers;
    memset(kv.k, 1, half);
    float *a = ceilings_stream_alloc(half / sizeof(float));
    cr_assert_not_null(a);
    memset(a, 1, half);
    double kv_share = ceilings_huge_fraction(kv.k, half), read_share = ceilings_huge_fraction(a, half);
    if (isnan(read_share) || read_share < 0.5)
        cr_log_info("the read array got %.2f of huge pages here: nothing to compare", read_share);
    else
        cr_expect_geq(kv_share, 0.5 * read_share, "KV cache %.2f huge vs the read array %.2f", kv_share,
                      read_share);
    ceilings_stream_free(a, half / sizeof(float));
    kv_cache_free(&kv);
}
