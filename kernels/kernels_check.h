/* kernels_check: a table of self-checks, each running one optimized kernel on the active ISA
 * (kernel_isa_active()) against its _ref twin (or an exact plain loop) on seeded mid-size data, for
 * `forge-roofline verify`. Kernels never print: a check only returns its verdict and its error measure.
 *
 * Error measure, per check: max over outputs of |got - ref| / scale, where scale is what the error is
 * relative to (stated per check in kernels_check.c: |ref|, or sum |w x| for matvec). A check passes when
 * that maximum is <= its tolerance, in the same units. The checks share static buffers: run them from one
 * thread at a time (the kernels inside still use their OpenMP teams, of the `threads` run passes). */
#ifndef FR_KERNELS_CHECK_H
#define FR_KERNELS_CHECK_H

struct kernels_check {
    const char *name;                         /* e.g. "matvec_bf16" */
    const char *what;                         /* one line: shape and reference */
    int (*run)(double *max_err, int threads); /* 0 pass, 1 fail; *max_err gets the error measure */
    double tolerance;                         /* pass bound on *max_err */
};

/* The table; *count gets its length. */
const struct kernels_check *kernels_checks(int *count);

#endif
