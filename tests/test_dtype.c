/* bf16 <-> f32 conversion against hand-computed bit patterns. */
#include <criterion/criterion.h>
#include <math.h>

#include "kernels/dtype.h"

Test(dtype, bf16_round_to_nearest_even) {
    cr_expect_eq(bf16_from_f32(1.0f), 0x3f80);
    /* 1 + 2^-8 is exactly halfway between two bf16 values: ties go to the even mantissa (1.0). */
    cr_expect_eq(bf16_from_f32(1.00390625f), 0x3f80);
    /* 1 + 3 * 2^-8 is halfway too: rounds up to the even neighbour 1 + 2^-6. */
    cr_expect_eq(bf16_from_f32(1.01171875f), 0x3f82);
    cr_expect_eq(bf16_from_f32(-2.0f), 0xc000);
    cr_expect_eq(bf16_from_f32(INFINITY), 0x7f80);
    cr_expect(isnan(bf16_to_f32(bf16_from_f32(NAN))));
    cr_expect_eq(bf16_to_f32(0x4049), 3.140625f);
}

Test(dtype, parse_names) {
    enum fr_dtype t;
    cr_expect_eq(fr_dtype_parse("bf16", &t), 0);
    cr_expect_eq(t, FR_DTYPE_BF16);
    cr_expect_eq(fr_dtype_parse("f32", &t), 0);
    cr_expect_eq(t, FR_DTYPE_F32);
    cr_expect_neq(fr_dtype_parse("fp16", &t), 0);
    cr_expect_eq(fr_dtype_size(FR_DTYPE_BF16), 2);
}
