/* prefill_attention's tile loop for the baseline x86-64 build (kernels/attention_prefill_body.h). */
#define APB(name)        name##_scalar
#define APB_FMA(a, b, c) ((a) * (b) + (c))
#define APB_MR           4
#include "kernels/attention_prefill_body.h"
