/* prefill_attention's tile loop built for AVX2 (kernels/attention_prefill_body.h). */
#define APB(name)        name##_avx2
#define APB_FMA(a, b, c) fmaf(a, b, c)
#ifndef APB_MR
#define APB_MR 2
#endif
#include <math.h>
#include "kernels/attention_prefill_body.h"
