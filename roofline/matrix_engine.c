/* The matrix engine's availability and roofs (see matrix_engine.h); the tile loops live in
 * matrix_engine_amx.c, compiled with the AMX flags. Checked in tests/test_matrix_engine.c: the refusals
 * (simulated), the per-row roof, and on this machine the probe's answer against /proc/cpuinfo's flags. */
#include "roofline/matrix_engine.h"

#include <cpuid.h>
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* arch_prctl codes and the tile-data state component (Linux's asm/prctl.h and xstate numbering) */
#define FR_ARCH_GET_XCOMP_SUPP 0x1022
#define FR_ARCH_REQ_XCOMP_PERM 0x1023
#define FR_XFEATURE_XTILEDATA  18

#define EDX_AMX_BF16 (1u << 22)
#define EDX_AMX_TILE (1u << 24)
#define EDX_AMX_INT8 (1u << 25)

struct matrix_engine_probe matrix_engine_probe(void) {
    struct matrix_engine_probe p = {.xcomp_supported = -1, .perm_errno = EOPNOTSUPP};
    unsigned a, b, c, d;
    if (__get_cpuid_count(7, 0, &a, &b, &c, &d)) p.cpuid7_edx = d;
    if (!(p.cpuid7_edx & EDX_AMX_TILE)) return p;
    unsigned long long mask = 0;
    if (syscall(SYS_arch_prctl, FR_ARCH_GET_XCOMP_SUPP, &mask) == 0) p.xcomp_supported = (long long)mask;
    if (p.xcomp_supported < 0 || !(mask & (1ull << FR_XFEATURE_XTILEDATA))) return p;
    p.perm_errno = syscall(SYS_arch_prctl, FR_ARCH_REQ_XCOMP_PERM, FR_XFEATURE_XTILEDATA) == 0 ? 0 : errno;
    return p;
}

bool matrix_engine_usable(const struct matrix_engine_probe *p, bool int8, char why[MATRIX_ENGINE_WHY_LEN]) {
    const uint32_t op_bit = int8 ? EDX_AMX_INT8 : EDX_AMX_BF16;
    const char *op = int8 ? "AMX-INT8" : "AMX-BF16";
    if (!(p->cpuid7_edx & (EDX_AMX_TILE | EDX_AMX_BF16 | EDX_AMX_INT8)))
        snprintf(why, MATRIX_ENGINE_WHY_LEN,
                 "no matrix engine: the CPU reports no AMX (CPUID.7.0:EDX bits "
                 "22, 24, 25 clear)");
    else if (!(p->cpuid7_edx & EDX_AMX_TILE) || !(p->cpuid7_edx & op_bit))
        snprintf(why, MATRIX_ENGINE_WHY_LEN, "the CPU reports AMX without %s",
                 p->cpuid7_edx & EDX_AMX_TILE ? op : "AMX-TILE");
    else if (p->xcomp_supported < 0)
        snprintf(why, MATRIX_ENGINE_WHY_LEN,
                 "the kernel does not answer ARCH_GET_XCOMP_SUPP (Linux before 5.16 has no AMX support)");
    else if (!((unsigned long long)p->xcomp_supported & (1ull << FR_XFEATURE_XTILEDATA)))
        snprintf(why, MATRIX_ENGINE_WHY_LEN,
                 "the kernel does not offer the tile state (XTILEDATA missing from ARCH_GET_XCOMP_SUPP)");
    else if (p->perm_errno != 0)
        snprintf(why, MATRIX_ENGINE_WHY_LEN, "arch_prctl(ARCH_REQ_XCOMP_PERM, XTILEDATA) refused: %s",
                 strerror(p->perm_errno));
    else
        return true;
    return false;
}

double matrix_engine_roof_rows(double peak, int m) {
    if (m < 1) return 0;
    return peak * (m < 16 ? m : 16) / 16.0;
}

static sigjmp_buf trap_jump;
static volatile sig_atomic_t trap_signal;

static void on_trap(int sig) {
    trap_signal = sig;
    siglongjmp(trap_jump, 1);
}

int matrix_engine_try(int (*loop)(long), long iters, char why[MATRIX_ENGINE_WHY_LEN]) {
    static const int sigs[] = {SIGILL, SIGSEGV, SIGBUS};
    struct sigaction act = {.sa_handler = on_trap}, old[3];
    sigemptyset(&act.sa_mask);
    for (int i = 0; i < 3; i++) sigaction(sigs[i], &act, &old[i]);
    trap_signal = 0;
    volatile int rc = -1; /* set between sigsetjmp and a possible siglongjmp */
    if (sigsetjmp(trap_jump, 1) == 0) {
        rc = loop(iters);
        if (rc != 0) snprintf(why, MATRIX_ENGINE_WHY_LEN, "the tile loop's accumulators failed their check");
    } else {
        snprintf(why, MATRIX_ENGINE_WHY_LEN, "the tile loop trapped (%s)", strsignal(trap_signal));
    }
    for (int i = 0; i < 3; i++) sigaction(sigs[i], &old[i], NULL);
    return rc;
}
