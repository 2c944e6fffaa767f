/* The CPU's matrix engine (Intel AMX tiles): whether this process may use it, its register-resident tile
 * loops for the ceilings, and the roof a tile gives M rows. A tile product works on 16 rows whatever M is,
 * so the engine's roof for M rows is min(M, 16) / 16 of its peak. Where the CPU, the kernel or the
 * permission says no, the ceilings are unavailable with that reason (every AMD machine: "no matrix
 * engine"). The loops have not yet run on a CPU with AMX: the 2-core Emerald Rapids VM they were written on
 * hides it (CPUID.7.0:EDX bits 22/24/25 clear). A trap in them is caught and becomes the reason. */
#ifndef FR_MATRIX_ENGINE_H
#define FR_MATRIX_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What the checks read: CPUID leaf 7 EDX, the kernel's ARCH_GET_XCOMP_SUPP mask (-1: the call failed) and
 * the errno of ARCH_REQ_XCOMP_PERM for XTILEDATA (0: granted). Filled from the machine by
 * matrix_engine_probe, or by the tests to simulate a refusal. */
struct matrix_engine_probe {
    uint32_t cpuid7_edx;
    long long xcomp_supported;
    int perm_errno;
};

#define MATRIX_ENGINE_WHY_LEN 128 /* as a ceiling figure's why */

/* Reads CPUID and asks the kernel for XTILEDATA (ARCH_REQ_XCOMP_PERM: once per process, inherited by its
 * threads); asks for the permission only when the CPU and the kernel offer the tiles. */
struct matrix_engine_probe matrix_engine_probe(void);

/* Whether the tiles may run given p, for bf16 (TDPBF16PS) or int8 (TDPBUSD); when not, why[] says which
 * of the CPU, the kernel or the permission refused, in one line starting "no matrix engine" where the CPU
 * has no AMX at all. */
bool matrix_engine_usable(const struct matrix_engine_probe *p, bool int8, char why[MATRIX_ENGINE_WHY_LEN]);

/* Multiply-adds of one tile instruction counted as 2 x 16 x 16 x K: K = 32 bf16 pairs (16384 FLOP) or 64
 * int8 values (32768 OP). */
#define MATRIX_ENGINE_BF16_FLOP 16384.0
#define MATRIX_ENGINE_INT8_OP   32768.0
/* Tile instructions a core issues per cycle at most, as FLOP (bf16) or OP (int8): Intel's 1024 bf16 FLOP
 * and 2048 int8 OP a cycle, the nominal rate the ceilings are compared with. */
#define MATRIX_ENGINE_BF16_FLOP_PER_CYCLE 1024.0
#define MATRIX_ENGINE_INT8_OP_PER_CYCLE   2048.0

/* The engine's roof for a product of m rows: peak x min(m, 16) / 16 (m < 1: 0). */
double matrix_engine_roof_rows(double peak, int m);

/* Runs `iters` rounds of four independent tile products (accumulators 0-3 from A tiles 4-5 and B tiles
 * 6-7, all register-resident) on the calling thread and checks every accumulator element: A = 1, B = 1/32
 * (bf16) makes each instruction add exactly 1, A = B = 1 (int8) adds 64. Returns 0 when every element holds
 * the expected count, -1 otherwise. Needs matrix_engine_usable first; iters <= 2^22. */
int matrix_engine_bf16_loop(long iters);
int matrix_engine_int8_loop(long iters);

/* Runs loop(iters) once on the calling thread with SIGILL, SIGSEGV and SIGBUS caught: 0 when it ran and
 * checked, -1 with why[] naming the signal or the failed check. */
int matrix_engine_try(int (*loop)(long), long iters, char why[MATRIX_ENGINE_WHY_LEN]);

#endif
