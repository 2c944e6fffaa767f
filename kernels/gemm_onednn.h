/* Layer: kernels/ (bottom of the include graph).
 * The oneDNN backend of gemm and matvec (MATVEC_BACKEND_ONEDNN): Intel's matmul as a second vendor yardstick
 * beside OpenBLAS, Y = X W^T with W [rows][cols] handed over as its transposed ('ba') B operand, so the
 * weights are read where they lie. oneDNN 2.6 wants src and weights of one type: with bf16 weights X is
 * rounded to bf16 inside the call (its time, and an error of at most 2^-8 an activation). Column panels
 * are one execution each, a sum post-op adding the later ones; block formats are refused. Creating a
 * primitive costs far more than running one, so the engine, stream, primitives (per shape, type, threads)
 * and scratch live in one lazy state that gemm_onednn_cleanup frees. oneDNN sizes its team from OpenMP's
 * thread count, which each call sets to `threads` and restores. Checked against gemm_ref and OpenBLAS in
 * tests/test_gemm_onednn.c; docs/batch.md says more. */
#ifndef FR_GEMM_ONEDNN_H
#define FR_GEMM_ONEDNN_H

#include <stdbool.h>
#include <stddef.h>

#include "kernels/dtype.h"

/* Y = X W^T (the contract of gemm in kernels/gemm.h: ldx >= cols, ldy >= rows, W as column panels of
 * panel_cols >= 1 columns). Called inside an active OpenMP region, every thread of it makes the call and one
 * of them runs it on one thread. Returns 0, or -1 with *why (when non-NULL) naming what oneDNN refused. */
int gemm_onednn(float *y, int ldy, const void *w, enum fr_dtype wtype, const float *x, int ldx, int batch,
                int rows, int cols, int panel_cols, int threads, const char **why);
/* Whether oneDNN runs a matmul of these weights here: it tries one small primitive of the type (kept). */
bool gemm_onednn_available(enum fr_dtype wtype, const char **why);
/* What ran, in one line, e.g. "oneDNN 2.6.3 matmul bf16: brg:avx512_core_bf16 (effective ISA
 * avx512_core_bf16)": the library's version (dnnl_version), the implementation each primitive of that type
 * created so far reports (dnnl_query_impl_info_str; several joined by ", " when shapes chose differently),
 * and the highest ISA the library dispatches to on this CPU (dnnl_get_effective_cpu_isa). Returns the
 * length written (cut to fit len). */
int gemm_onednn_describe(enum fr_dtype wtype, char *buf, size_t len);
/* The name of a dnnl_cpu_isa_t value of oneDNN 2.6 ("avx512_core_bf16"), "unknown" for any other. */
const char *gemm_onednn_isa_name(int isa);
/* Frees the primitives, the scratch, the stream and the engine; the next call starts over. */
void gemm_onednn_cleanup(void);

#endif
