/* prefill_attention's tile loop built for AVX512 (kernels/attention_prefill_body.h). */
#define APB(name)        name##_avx512
#define APB_FMA(a, b, c) fmaf(a, b, c)
#ifndef APB_MR
#define APB_MR 8
#endif
#include <math.h>
#include "kernels/attention_prefill_body.h"
