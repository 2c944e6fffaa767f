/* The register-resident tile loops of the matrix engine's ceilings (matrix_engine.h), compiled with
 * -mamx-tile -mamx-bf16 -mamx-int8 and called only where matrix_engine_usable said yes. Four accumulators
 * (tiles 0-3) take products of two A tiles (4, 5) and two B tiles (6, 7), so four products are in flight
 * while each one's latency runs; nothing is loaded inside the loop. */
#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#include "roofline/matrix_engine.h"

/* LDTILECFG's 64-byte layout: palette 1, every tile 16 rows of 64 bytes */
struct tile_config {
    uint8_t palette, start_row, reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
};

static void configure(void) {
    struct tile_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.palette = 1;
    for (int t = 0; t < 8; t++) cfg.colsb[t] = 64, cfg.rows[t] = 16;
    _tile_loadconfig(&cfg);
}

/* One round: the four accumulators, each from its own A and B pair, independent of one another */
#define FOUR_PRODUCTS(op)                                                                                    \
    op(0, 4, 6);                                                                                             \
    op(1, 4, 7);                                                                                             \
    op(2, 5, 6);                                                                                             \
    op(3, 5, 7);

/* Configures the tiles, loads A (both A tiles) and B (both B tiles), 16 rows of 64 bytes each, and zeroes
 * the accumulators */
static void start(const void *a, const void *b) {
    configure();
    _tile_loadd(4, a, 64);
    _tile_loadd(5, a, 64);
    _tile_loadd(6, b, 64);
    _tile_loadd(7, b, 64);
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
}

/* Every element of accumulators 0-3 stored and compared with want (f32 or int32 bits, 16 x 16 each) */
static int check_accumulators(uint32_t want) {
    uint32_t c[16 * 16];
    int bad = 0;
#define CHECK_TILE(t)                                                                                        \
    _tile_stored(t, c, 64);                                                                                  \
    for (int i = 0; i < 256; i++) bad += c[i] != want;
    CHECK_TILE(0)
    CHECK_TILE(1)
    CHECK_TILE(2)
    CHECK_TILE(3)
#undef CHECK_TILE
    return bad ? -1 : 0;
}

int matrix_engine_bf16_loop(long iters) {
    uint16_t a[16 * 32], b[16 * 32];
    for (int i = 0; i < 16 * 32; i++) a[i] = 0x3f80, b[i] = 0x3d00; /* bf16 1 and 1/32 */
    start(a, b);
    for (long i = 0; i < iters; i++) {
        FOUR_PRODUCTS(_tile_dpbf16ps)
    }
    float want = (float)iters; /* 32 products of 1/32 an instruction: exact below 2^24 */
    uint32_t bits;
    memcpy(&bits, &want, sizeof bits);
    int rc = check_accumulators(bits);
    _tile_release();
    return rc;
}

int matrix_engine_int8_loop(long iters) {
    uint8_t a[16 * 64];
    int8_t b[16 * 64];
    memset(a, 1, sizeof a);
    memset(b, 1, sizeof b);
    start(a, b);
    for (long i = 0; i < iters; i++) {
        FOUR_PRODUCTS(_tile_dpbusd)
    }
    int rc = check_accumulators((uint32_t)(64 * iters));
    _tile_release();
    return rc;
}
