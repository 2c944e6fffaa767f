/* Topology from synthetic hwloc descriptions (hand-counted objects and sizes), from XML (the cache-line
 * size, which synthetic descriptions fix at 64), the live machine (line size against glibc's sysconf),
 * binding. */
#include <cJSON.h>
#include <criterion/criterion.h>
#include <hwloc.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernels/team.h"
#include "model/decode.h"
#include "roofline/topology.h"

#define MiB ((size_t)1 << 20)
#define KiB ((size_t)1 << 10)

Test(topology, two_packages_shared_l3) {
    struct machine m;
    struct fr_err err = {{0}};
    cr_assert_eq(machine_from_synthetic(&m, "pack:2 l3:1(size=16777216) core:4 pu:1", 0, &err), 0, "%s",
                 err.msg);
    cr_expect_eq(m.packages, 2);
    cr_expect_eq(m.numa_nodes, 1); /* hwloc inserts one NUMA node when none is described */
    cr_expect_eq(m.cores, 8);
    cr_expect_eq(m.pus, 8);
    cr_expect_eq(m.l3_bytes, 16 * MiB);
    cr_expect_eq(m.l3_count, 2);
    cr_expect_eq(m.l2_bytes, 0);
    cr_expect_eq(m.l1d_bytes, 0);
    cr_expect_eq(m.llc_level, 3);
    cr_expect_eq(m.llc_total_bytes, 32 * MiB);
    cr_expect_eq(m.threads, 8);
    cr_expect_str_eq(m.binding, "not bound");
}

Test(topology, four_numa_nodes) {
    struct machine m;
    struct fr_err err = {{0}};
    cr_assert_eq(machine_from_synthetic(&m, "pack:1 numa:4 core:2 pu:1", 3, &err), 0, "%s", err.msg);
    cr_expect_eq(m.packages, 1);
    cr_expect_eq(m.numa_nodes, 4);
    cr_expect_eq(m.cores, 8);
    cr_expect_eq(m.pus, 8);
    cr_expect_eq(m.memory_bytes, 4ull << 30); /* hwloc gives each synthetic node 1 GiB */
    cr_expect_eq(m.threads, 3);
    cr_expect_eq(m.llc_level, 0);
    cr_expect_eq(m.llc_total_bytes, 0);
}

Test(topology, smt_two_pus_per_core) {
    struct machine m;
    struct fr_err err = {{0}};
    cr_assert_eq(machine_from_synthetic(&m,
                                        "pack:2 numa:2 l3:1(size=33554432) l2:4(size=1048576) "
                                        "l1d:1(size=32768) core:1 pu:2",
                                        0, &err),
                 0, "%s", err.msg);
    cr_expect_eq(m.packages, 2);
    cr_expect_eq(m.numa_nodes, 4);
    cr_expect_eq(m.cores, 16);
    cr_expect_eq(m.pus, 32);
    cr_expect_eq(m.threads, 16); /* one per core, not per PU */
    cr_expect_eq(m.l1d_bytes, 32 * KiB);
    cr_expect_eq(m.l1d_count, 16);
    cr_expect_eq(m.l2_bytes, 1 * MiB);
    cr_expect_eq(m.l3_bytes, 32 * MiB);
    cr_expect_eq(m.l3_count, 4);
    cr_expect_eq(m.llc_total_bytes, 128 * MiB);
}

Test(topology, no_l3) {
    struct machine m;
    struct fr_err err = {{0}};
    cr_assert_eq(
        machine_from_synthetic(&m, "pack:1 l2:4(size=1048576) l1d:1(size=49152) core:1 pu:2", 0, &err), 0,
        "%s", err.msg);
    cr_expect_eq(m.cores, 4);
    cr_expect_eq(m.pus, 8);
    cr_expect_eq(m.l3_bytes, 0);
    cr_expect_eq(m.l3_count, 0);
    cr_expect_eq(m.l2_bytes, 1 * MiB);
    cr_expect_eq(m.l1d_bytes, 48 * KiB);
    cr_expect_eq(m.llc_level, 2);
    cr_expect_eq(m.llc_bytes, 1 * MiB);
    cr_expect_eq(m.llc_total_bytes, 4 * MiB);
}

Test(topology, bad_inputs) {
    struct machine m;
    struct fr_err err = {{0}};
    cr_expect_neq(machine_from_synthetic(&m, "pack:two core:x", 0, &err), 0);
    cr_expect(strstr(err.msg, "hwloc_topology_set_synthetic"), "message: %s", err.msg);
    cr_expect_neq(machine_from_synthetic(&m, "", 0, &err), 0);
    cr_expect_neq(machine_from_synthetic(&m, "core:4 pu:1", 5, &err), 0);
    cr_expect(strstr(err.msg, "4 cores"), "message: %s", err.msg);
    cr_expect_neq(machine_from_synthetic(&m, "core:4 pu:1", -1, &err), 0);
}

Test(topology, live_machine_and_binding) {
    struct machine m;
    struct fr_err err = {{0}};
    cr_assert_eq(machine_detect(&m, 1, &err), 0, "%s", err.msg);
    cr_expect_geq(m.cores, 1);
    cr_expect_geq(m.pus, m.cores);
    cr_expect_geq(m.packages, 1);
    cr_expect_geq(m.numa_nodes, 1);
    cr_expect_gt(m.memory_bytes, 0);
    cr_expect_gt(strlen(m.cpu_model), 0);
    cr_expect_eq(m.threads, 1);
    cr_assert_eq(machine_bind_threads(&m, &err), 0, "%s", err.msg);
    cr_expect(strstr(m.binding, "hwloc_set_cpubind"), "binding: %s", m.binding);
    /* Asking for more threads than cores is refused. */
    m.threads = m.cores + 1;
    cr_expect_neq(machine_bind_threads(&m, &err), 0);
}

/* Binding a run's threads one to a core leaves the calling thread on one core; the processors the process
 * may use stay what they were, so a bound run of two threads still runs its step on one kernel team (the
 * bug: omp_get_num_procs counts the caller's own mask, and every bound run forked per matvec). */
Test(topology, binding_keeps_the_step_team) {
    const int procs = kernel_team_procs();
    struct machine m;
    struct fr_err err = {{0}};
    cr_assert_eq(machine_detect(&m, 0, &err), 0, "%s", err.msg);
    if (m.cores < 2 || procs < 2) cr_skip_test("one core: no team to keep (%d cores)", m.cores);
    m.threads = 2;
    cr_assert_eq(machine_bind_threads(&m, &err), 0, "%s", err.msg);
    cpu_set_t mine;
    cr_assert_eq(sched_getaffinity(0, sizeof mine, &mine), 0);
    cr_expect_eq(CPU_COUNT(&mine), 1, "the calling thread is bound to one processor");
    cr_expect_eq(kernel_team_procs(), procs);
    cr_expect(decode_runs_team(MATVEC_BACKEND_FORGE, 2), "two bound threads run the step as one team");
}

Test(topology, json_fields) {
    struct machine m;
    struct fr_err err = {{0}};
    cr_assert_eq(machine_from_synthetic(&m, "pack:1 l3:1(size=8388608) core:2 pu:2", 0, &err), 0, "%s",
                 err.msg);
    cJSON *o = cJSON_CreateObject();
    cr_assert_eq(machine_to_json(&m, o), 0);
    cr_expect_eq(cJSON_GetObjectItem(o, "cores")->valuedouble, 2);
    cr_expect_eq(cJSON_GetObjectItem(o, "pus")->valuedouble, 4);
    cr_expect_eq(cJSON_GetObjectItem(o, "numa_nodes")->valuedouble, 1);
    cJSON *caches = cJSON_GetObjectItem(o, "caches");
    cr_assert(caches);
    cr_expect_eq(cJSON_GetObjectItem(caches, "l3")->valuedouble, 8388608.0);
    cr_expect_eq(cJSON_GetObjectItem(caches, "l1d")->valuedouble, 0);
    cr_expect(cJSON_IsObject(cJSON_GetObjectItem(o, "isa")));
    cJSON_Delete(o);
}

/* hwloc's XML of a synthetic topology, with every cache-line size replaced by `line` (hwloc's synthetic
 * format has no line-size attribute: it gives 64). Caller frees. */
static char *xml_with_line_size(const char *desc, const char *line) {
    hwloc_topology_t t;
    cr_assert_eq(hwloc_topology_init(&t), 0);
    cr_assert_eq(hwloc_topology_set_synthetic(t, desc), 0);
    cr_assert_eq(hwloc_topology_load(t), 0);
    char *xml = NULL;
    int len = 0;
    cr_assert_eq(hwloc_topology_export_xmlbuffer(t, &xml, &len, 0), 0);
    size_t cap = (size_t)len * 2 + 64, out_n = 0;
    char *out = malloc(cap);
    cr_assert_not_null(out);
    const char *key = "cache_linesize=\"64\"";
    int replaced = 0;
    for (const char *p = xml; *p;) {
        if (strncmp(p, key, strlen(key)) == 0) {
            out_n += (size_t)snprintf(out + out_n, cap - out_n, "cache_linesize=\"%s\"", line);
            p += strlen(key);
            replaced++;
        } else {
            out[out_n++] = *p++;
        }
    }
    out[out_n] = '\0';
    cr_assert_gt(replaced, 0, "no cache_linesize in hwloc's XML");
    hwloc_free_xmlbuffer(t, xml);
    hwloc_topology_destroy(t);
    return out;
}

Test(topology, llc_line_size_from_hwloc) {
    struct machine m;
    struct fr_err err = {{0}};
    char *xml = xml_with_line_size("pack:1 l3:1(size=8388608) l2:2(size=1048576) core:1 pu:1", "128");
    cr_assert_eq(machine_from_xml(&m, xml, 0, &err), 0, "%s", err.msg);
    cr_expect_eq(m.llc_level, 3);
    cr_expect_eq(m.l3_bytes, 8 * MiB);
    cr_expect_eq(m.llc_line_bytes, 128);
    free(xml);
    /* unknown in the topology: 0, never a guess */
    xml = xml_with_line_size("pack:1 l3:1(size=8388608) core:2 pu:1", "0");
    cr_assert_eq(machine_from_xml(&m, xml, 0, &err), 0, "%s", err.msg);
    cr_expect_eq(m.llc_line_bytes, 0);
    free(xml);
    cr_expect_neq(machine_from_xml(&m, "", 0, &err), 0);
    cr_expect_neq(machine_from_xml(&m, "<topology>", 0, &err), 0);
}

Test(topology, live_llc_line_size_matches_sysconf) {
    struct machine m;
    struct fr_err err = {{0}};
    cr_assert_eq(machine_detect(&m, 0, &err), 0, "%s", err.msg);
    static const int names[4] = {0, _SC_LEVEL1_DCACHE_LINESIZE, _SC_LEVEL2_CACHE_LINESIZE,
                                 _SC_LEVEL3_CACHE_LINESIZE};
    long want = m.llc_level >= 1 && m.llc_level <= 3 ? sysconf(names[m.llc_level]) : -1;
    if (want <= 0) cr_skip_test("glibc gives no line size for L%d to compare with", m.llc_level);
    cr_expect_eq((long)m.llc_line_bytes, want, "hwloc L%d line %u B, sysconf %ld B", m.llc_level,
                 m.llc_line_bytes, want);
}
