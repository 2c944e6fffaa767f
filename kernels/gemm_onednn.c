/* The oneDNN backend (kernels/gemm_onednn.h): one cached matmul primitive per shape, type, accumulation and
 * thread count, its memory objects rewrapped around the caller's buffers on every call. Checked against
 * gemm_ref (bf16 and f32, odd shapes, column panels) and OpenBLAS sgemm in tests/test_gemm_onednn.c. */
#include "kernels/gemm_onednn.h"

#include <oneapi/dnnl/dnnl.h>
#include <oneapi/dnnl/dnnl_debug.h>
#include <omp.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/col_panels.h"
#include "kernels/team.h"

/* Scratch conversions of fewer elements run on the calling thread alone (a team's fork costs more) */
#define ONEDNN_CONVERT_PARALLEL_MIN ((size_t)1 << 16)

/* What makes two primitives differ: lds is the row stride of the src oneDNN reads (the bf16 scratch's or
 * X's own), cols the panel's width; accumulate adds into Y (the sum post-op of panels after the first). */
struct onednn_key {
    int wtype, batch, rows, cols, lds, ldy, accumulate, threads;
};

struct onednn_prim {
    struct onednn_key key;
    dnnl_primitive_t prim;
    dnnl_memory_t src, wei, dst; /* created without data; pointed at the call's buffers */
    char impl[64];               /* dnnl_query_impl_info_str of its descriptor */
};

/* Index 0 bf16, 1 f32: whether a matmul of the type was found here (0 unknown, 1 yes, -1 no) and why not. */
struct onednn_probe {
    int known;
    char why[192];
};

static struct {
    dnnl_engine_t engine;
    dnnl_stream_t stream;
    struct onednn_prim *prims; /* [n_prims] of [cap_prims] */
    int n_prims, cap_prims;
    uint16_t *xb; /* [xb_cap] bf16 rows of X */
    size_t xb_cap;
    struct onednn_probe probe[2];
} onednn;
static pthread_mutex_t onednn_lock = PTHREAD_MUTEX_INITIALIZER;
static _Thread_local char onednn_why[192];

static const char *onednn_fail(const char *what, dnnl_status_t s) {
    snprintf(onednn_why, sizeof onednn_why, "oneDNN %s failed: %s", what, dnnl_status2str(s));
    return onednn_why;
}

static const char *onednn_unimplemented(enum fr_dtype t) {
    snprintf(onednn_why, sizeof onednn_why,
             "oneDNN has no %s matmul implementation on this CPU (effective ISA %s)", fr_dtype_name(t),
             gemm_onednn_isa_name((int)dnnl_get_effective_cpu_isa()));
    return onednn_why;
}

const char *gemm_onednn_isa_name(int isa) {
    switch (isa) {
    case dnnl_cpu_isa_all:
        return "all";
    case dnnl_cpu_isa_sse41:
        return "sse41";
    case dnnl_cpu_isa_avx:
        return "avx";
    case dnnl_cpu_isa_avx2:
        return "avx2";
    case dnnl_cpu_isa_avx2_vnni:
        return "avx2_vnni";
    case dnnl_cpu_isa_avx512_mic:
        return "avx512_mic";
    case dnnl_cpu_isa_avx512_mic_4ops:
        return "avx512_mic_4ops";
    case dnnl_cpu_isa_avx512_core:
        return "avx512_core";
    case dnnl_cpu_isa_avx512_core_vnni:
        return "avx512_core_vnni";
    case dnnl_cpu_isa_avx512_core_bf16:
        return "avx512_core_bf16";
    case dnnl_cpu_isa_avx512_core_amx:
        return "avx512_core_amx";
    default:
        return "unknown";
    }
}

/* Under the lock. */
static const char *onednn_state_init(void) {
    if (onednn.stream) return NULL;
    dnnl_status_t s = dnnl_engine_create(&onednn.engine, dnnl_cpu, 0);
    if (s != dnnl_success) {
        onednn.engine = NULL;
        return onednn_fail("dnnl_engine_create", s);
    }
    s = dnnl_stream_create(&onednn.stream, onednn.engine, dnnl_stream_default_flags);
    if (s != dnnl_success) {
        dnnl_engine_destroy(onednn.engine);
        onednn.engine = NULL, onednn.stream = NULL;
        return onednn_fail("dnnl_stream_create", s);
    }
    return NULL;
}

static void onednn_prim_free(struct onednn_prim *p) {
    if (p->src) dnnl_memory_destroy(p->src);
    if (p->wei) dnnl_memory_destroy(p->wei);
    if (p->dst) dnnl_memory_destroy(p->dst);
    if (p->prim) dnnl_primitive_destroy(p->prim);
    memset(p, 0, sizeof *p);
}

/* The matmul's descriptor for k: src [batch][cols] (row stride lds), weights as B = W^T, i.e. dims
 * [cols][rows] with strides {1, cols} (W's rows, 'ba'), dst f32 [batch][rows] (row stride ldy). */
static dnnl_status_t onednn_pd_make(const struct onednn_key *k, dnnl_memory_desc_t md[3],
                                    dnnl_primitive_desc_t *pd) {
    const dnnl_data_type_t t = k->wtype == FR_DTYPE_BF16 ? dnnl_bf16 : dnnl_f32;
    const dnnl_dims_t sd = {k->batch, k->cols}, ss = {k->lds, 1};
    const dnnl_dims_t wd = {k->cols, k->rows}, ws = {1, k->cols};
    const dnnl_dims_t dd = {k->batch, k->rows}, ds = {k->ldy, 1};
    dnnl_status_t s;
    if ((s = dnnl_memory_desc_init_by_strides(&md[0], 2, sd, t, ss)) != dnnl_success ||
        (s = dnnl_memory_desc_init_by_strides(&md[1], 2, wd, t, ws)) != dnnl_success ||
        (s = dnnl_memory_desc_init_by_strides(&md[2], 2, dd, dnnl_f32, ds)) != dnnl_success)
        return s;
    dnnl_matmul_desc_t mm;
    if ((s = dnnl_matmul_desc_init(&mm, &md[0], &md[1], NULL, &md[2])) != dnnl_success) return s;
    dnnl_primitive_attr_t attr = NULL;
    dnnl_post_ops_t po = NULL;
    if ((s = dnnl_primitive_attr_create(&attr)) != dnnl_success) return s;
    if (k->accumulate) { /* dst = dst + X W^T */
        if ((s = dnnl_post_ops_create(&po)) == dnnl_success &&
            (s = dnnl_post_ops_append_sum(po, 1.0f)) == dnnl_success)
            s = dnnl_primitive_attr_set_post_ops(attr, po);
        if (po) dnnl_post_ops_destroy(po);
    }
    if (s == dnnl_success) s = dnnl_primitive_desc_create(pd, &mm, attr, onednn.engine, NULL);
    dnnl_primitive_attr_destroy(attr);
    return s;
}

/* Makes the primitive of k into *p (under the lock, with OpenMP's thread count already k->threads: the
 * implementation plans its team when it is created). */
static const char *onednn_prim_make(const struct onednn_key *k, struct onednn_prim *p) {
    memset(p, 0, sizeof *p);
    p->key = *k;
    dnnl_memory_desc_t md[3];
    dnnl_primitive_desc_t pd = NULL;
    dnnl_status_t s = onednn_pd_make(k, md, &pd);
    if (s == dnnl_unimplemented) return onednn_unimplemented((enum fr_dtype)k->wtype);
    if (s != dnnl_success) return onednn_fail("matmul descriptor", s);
    const char *impl = NULL;
    if (dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, (void *)&impl) != dnnl_success || !impl)
        impl = "?";
    snprintf(p->impl, sizeof p->impl, "%s", impl);
    s = dnnl_primitive_create(&p->prim, pd);
    dnnl_primitive_desc_destroy(pd);
    if (s != dnnl_success) {
        p->prim = NULL;
        return onednn_fail("dnnl_primitive_create", s);
    }
    for (int i = 0; i < 3; i++) {
        dnnl_memory_t *m[3] = {&p->src, &p->wei, &p->dst};
        if ((s = dnnl_memory_create(m[i], &md[i], onednn.engine, DNNL_MEMORY_NONE)) != dnnl_success) {
            *m[i] = NULL;
            onednn_prim_free(p);
            return onednn_fail("dnnl_memory_create", s);
        }
    }
    return NULL;
}

/* The cached primitive of k, made on first use (under the lock); NULL with *why when oneDNN refused. */
static struct onednn_prim *onednn_prim_get(const struct onednn_key *k, const char **why) {
    for (int i = 0; i < onednn.n_prims; i++)
        if (memcmp(&onednn.prims[i].key, k, sizeof *k) == 0) return &onednn.prims[i];
    if (onednn.n_prims == onednn.cap_prims) {
        int cap = onednn.cap_prims ? 2 * onednn.cap_prims : 32;
        struct onednn_prim *grown = realloc(onednn.prims, (size_t)cap * sizeof *grown);
        if (!grown) {
            *why = "out of memory for oneDNN's primitive cache";
            return NULL;
        }
        onednn.prims = grown, onednn.cap_prims = cap;
    }
    struct onednn_prim *p = &onednn.prims[onednn.n_prims];
    if ((*why = onednn_prim_make(k, p)) != NULL) return NULL;
    onednn.n_prims++;
    return p;
}

/* X's rows rounded to bf16 into the scratch, [batch][cols] with no padding; NULL when out of memory. */
static const uint16_t *onednn_x_bf16(const float *x, int ldx, int batch, int cols, int threads) {
    size_t n = (size_t)batch * (size_t)cols;
    if (n > onednn.xb_cap) {
        free(onednn.xb);
        onednn.xb = aligned_alloc(64, (n * sizeof *onednn.xb + 63) & ~(size_t)63);
        onednn.xb_cap = onednn.xb ? n : 0;
        if (!onednn.xb) return NULL;
    }
    uint16_t *xb = onednn.xb;
#pragma omp parallel for num_threads(threads) schedule(static) if (n >= ONEDNN_CONVERT_PARALLEL_MIN)
    for (int b = 0; b < batch; b++)
        for (int c = 0; c < cols; c++)
            xb[(size_t)b * (size_t)cols + (size_t)c] = bf16_from_f32(x[(size_t)b * (size_t)ldx + (size_t)c]);
    return xb;
}

/* One execution per panel (under the lock, OpenMP's thread count set to threads). */
static const char *onednn_run(float *y, int ldy, const void *w, enum fr_dtype wtype, const float *x, int ldx,
                              int batch, int rows, int cols, int pw, int threads) {
    const char *why = onednn_state_init();
    if (why) return why;
    const size_t es = fr_dtype_size(wtype);
    const void *src = x;
    int lds = ldx;
    if (wtype == FR_DTYPE_BF16) {
        if (!(src = onednn_x_bf16(x, ldx, batch, cols, threads))) return "out of memory for oneDNN's bf16 X";
        lds = cols;
    }
    for (int p = 0; p < col_panel_count(cols, pw); p++) {
        const struct onednn_key k = {(int)wtype, batch, rows,  col_panel_cols(cols, pw, p),
                                     lds,        ldy,   p > 0, threads};
        struct onednn_prim *pr = onednn_prim_get(&k, &why);
        if (!pr) return why;
        dnnl_status_t s;
        /* oneDNN takes non-const handles; it only reads src and weights */
        if ((s = dnnl_memory_set_data_handle(pr->src, (char *)(uintptr_t)src +
                                                          (size_t)p * (size_t)pw * es)) != dnnl_success ||
            (s = dnnl_memory_set_data_handle(pr->wei, (char *)(uintptr_t)w + col_panel_start(rows, pw, p) *
                                                                                 es)) != dnnl_success ||
            (s = dnnl_memory_set_data_handle(pr->dst, y)) != dnnl_success)
            return onednn_fail("dnnl_memory_set_data_handle", s);
        const dnnl_exec_arg_t args[3] = {
            {DNNL_ARG_SRC, pr->src}, {DNNL_ARG_WEIGHTS, pr->wei}, {DNNL_ARG_DST, pr->dst}};
        if ((s = dnnl_primitive_execute(pr->prim, onednn.stream, 3, args)) != dnnl_success)
            return onednn_fail("matmul execution", s);
    }
    dnnl_status_t s = dnnl_stream_wait(onednn.stream);
    return s == dnnl_success ? NULL : onednn_fail("dnnl_stream_wait", s);
}

static const char *onednn_refuse(enum fr_dtype wtype, int panel_cols) {
    if (panel_cols < 1) return "column panels of fewer than one column";
    if (fr_dtype_is_block(wtype)) return "oneDNN's matmul has no Q8_0 or Q4_0 weights";
    if (wtype != FR_DTYPE_BF16 && wtype != FR_DTYPE_F32) return "oneDNN runs bf16 and f32 weights only";
    return NULL;
}

/* The call on `threads` threads, under the lock (one caller at a time: the memory objects are shared). */
static const char *onednn_locked(float *y, int ldy, const void *w, enum fr_dtype wtype, const float *x,
                                 int ldx, int batch, int rows, int cols, int pw, int threads) {
    pthread_mutex_lock(&onednn_lock);
    const int before = omp_get_max_threads(); /* oneDNN reads its team's size here, at creation and run */
    omp_set_num_threads(threads < 1 ? 1 : threads);
    const char *why = onednn_run(y, ldy, w, wtype, x, ldx, batch, rows, cols, pw, threads < 1 ? 1 : threads);
    omp_set_num_threads(before);
    pthread_mutex_unlock(&onednn_lock);
    return why;
}

int gemm_onednn(float *y, int ldy, const void *w, enum fr_dtype wtype, const float *x, int ldx, int batch,
                int rows, int cols, int panel_cols, int threads, const char **why) {
    const char *no = onednn_refuse(wtype, panel_cols);
    if (no) {
        if (why) *why = no;
        return -1;
    }
    if (batch <= 0 || rows <= 0) return 0;
    if (cols <= 0) {
        for (int b = 0; b < batch; b++) memset(y + (size_t)b * (size_t)ldy, 0, (size_t)rows * sizeof *y);
        return 0;
    }
    const char *failed = NULL;
    if (kernel_team_in_region()) { /* one whole call for the team, as OpenBLAS's (kernels/gemm.c) */
#pragma omp single copyprivate(failed)
        failed = onednn_locked(y, ldy, w, wtype, x, ldx, batch, rows, cols, panel_cols, 1);
    } else {
        failed = onednn_locked(y, ldy, w, wtype, x, ldx, batch, rows, cols, panel_cols, threads);
    }
    if (failed && why) *why = failed;
    return failed ? -1 : 0;
}

bool gemm_onednn_available(enum fr_dtype wtype, const char **why) {
    const char *no = onednn_refuse(wtype, 1);
    if (no) {
        if (why) *why = no;
        return false;
    }
    struct onednn_probe *pb = &onednn.probe[wtype == FR_DTYPE_BF16 ? 0 : 1];
    pthread_mutex_lock(&onednn_lock);
    if (!pb->known) { /* a 1 x 1 x 1 matmul's descriptor: made and dropped, only the answer kept */
        const char *fail = onednn_state_init();
        if (!fail) {
            const struct onednn_key k = {(int)wtype, 1, 1, 1, 1, 1, 0, 1};
            dnnl_memory_desc_t md[3];
            dnnl_primitive_desc_t pd = NULL;
            dnnl_status_t s = onednn_pd_make(&k, md, &pd);
            if (s == dnnl_success)
                dnnl_primitive_desc_destroy(pd);
            else
                fail = s == dnnl_unimplemented ? onednn_unimplemented(wtype)
                                               : onednn_fail("matmul descriptor", s);
        }
        pb->known = fail ? -1 : 1;
        snprintf(pb->why, sizeof pb->why, "%s", fail ? fail : "");
    }
    const bool ok = pb->known > 0;
    pthread_mutex_unlock(&onednn_lock);
    if (!ok && why) *why = pb->why;
    return ok;
}

/* Appends to buf[len] at *at, cut to fit. */
__attribute__((format(printf, 4, 5))) static void onednn_put(char *buf, size_t len, size_t *at,
                                                             const char *fmt, ...) {
    if (*at + 1 >= len) return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *at, len - *at, fmt, ap);
    va_end(ap);
    if (n > 0) *at = *at + (size_t)n < len ? *at + (size_t)n : len - 1;
}

int gemm_onednn_describe(enum fr_dtype wtype, char *buf, size_t len) {
    if (len == 0) return 0;
    const dnnl_version_t *v = dnnl_version();
    size_t at = 0;
    buf[0] = '\0';
    onednn_put(buf, len, &at, "oneDNN %d.%d.%d matmul %s: ", v->major, v->minor, v->patch,
               fr_dtype_name(wtype));
    int found = 0;
    pthread_mutex_lock(&onednn_lock);
    for (int i = 0; i < onednn.n_prims; i++) { /* each implementation once, in the order first made */
        const struct onednn_prim *p = &onednn.prims[i];
        int seen = p->key.wtype != (int)wtype;
        for (int j = 0; j < i && !seen; j++)
            seen = onednn.prims[j].key.wtype == (int)wtype && strcmp(onednn.prims[j].impl, p->impl) == 0;
        if (!seen) onednn_put(buf, len, &at, "%s%s", found++ ? ", " : "", p->impl);
    }
    pthread_mutex_unlock(&onednn_lock);
    onednn_put(buf, len, &at, "%s (effective ISA %s)", found ? "" : "no primitive run yet",
               gemm_onednn_isa_name((int)dnnl_get_effective_cpu_isa()));
    return (int)at;
}

void gemm_onednn_cleanup(void) {
    pthread_mutex_lock(&onednn_lock);
    for (int i = 0; i < onednn.n_prims; i++) onednn_prim_free(&onednn.prims[i]);
    free(onednn.prims);
    free(onednn.xb);
    if (onednn.stream) dnnl_stream_destroy(onednn.stream);
    if (onednn.engine) dnnl_engine_destroy(onednn.engine);
    memset(&onednn, 0, sizeof onednn);
    pthread_mutex_unlock(&onednn_lock);
}
