/* libFuzzer harness for the sampler: any bytes as a row of logits must give a token or a clean error, and
 * the same bytes made into probabilities must give bit-identical fast and sort top-p filters on every
 * instruction set. Aborts on any disagreement. `make fuzz` runs it; the seed corpus (tests/fuzz/corpus/
 * fuzz_sampler) is a dyadic f32 row and a tied bf16 row with a NaN, made with struct.pack: 8 header
 * bytes (top_p * 1e6 as u32, temperature byte, dtype byte, 2 spare) and the values. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/sampler.h"
#include "kernels/team.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 8) return 0;
    uint32_t head;
    memcpy(&head, data, 4);
    float top_p = (float)(head % 1000001u) / 1e6f;    /* [0, 1] */
    float temperature = (float)(data[4] % 8) * 0.25f; /* 0 (greedy) .. 1.75 */
    enum fr_dtype dtype = data[5] & 1 ? FR_DTYPE_BF16 : FR_DTYPE_F32;
    data += 8, size -= 8;
    int n = (int)(size / fr_dtype_size(dtype));
    if (n < 1 || n > 4096) return 0;
    void *scratch = malloc(sampler_scratch_bytes(n));
    float *p = malloc(sizeof(float) * (size_t)n), *a = malloc(sizeof(float) * (size_t)n);
    float *b = malloc(sizeof(float) * (size_t)n);

    struct sampler_params prm = {temperature, top_p, 7};
    struct fr_err err;
    int tok = -1;
    if (sampler_pick_row(data, dtype, n, &prm, 3, scratch, kernel_team_procs(), &tok, &err) == 0 &&
        (tok < 0 || tok >= n))
        abort();

    for (int i = 0; i < n; i++) { /* probabilities: |value|, non-finite ones dropped to 0 */
        float v = dtype == FR_DTYPE_BF16 ? bf16_to_f32(((const uint16_t *)(const void *)data)[i])
                                         : ((const float *)(const void *)data)[i];
        p[i] = isfinite(v) ? fabsf(v) : 0.0f;
    }
    if (sampler_check_probs(p, n, NULL) == 0) {
        int kr = sampler_top_p_ref_into(a, p, n, top_p, scratch);
        for (int isa = 0; isa < KERNEL_ISA_COUNT; isa++) {
            if (sampler_isa_force((enum kernel_isa)isa) != 0) continue;
            int kf = sampler_top_p_fast_into(b, p, n, top_p, scratch);
            if (kf != kr || memcmp(a, b, sizeof(float) * (size_t)n) != 0) abort();
            int t = sampler_draw(b, n, 0.5);
            if (t < 0 || !(b[t] > 0.0f)) abort();
        }
        sampler_isa_force(KERNEL_ISA_COUNT);
    }
    free(scratch), free(p), free(a), free(b);
    return 0;
}
