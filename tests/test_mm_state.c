/* roofline/mm_state.h: transparent huge pages and DAMON read from a sysfs tree made here (the selected
 * choices, the kdamonds that are on with their operations and actions, nothing when the tree is absent),
 * and the report's setup line and run.json keep them. */
#include <cJSON.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench/report/report_json.h"
#include "roofline/mm_state.h"
#include "tests/report_fixture.h"
#include "tests/report_testutil.h"

static char root[256];

/* Writes text to root/rel, creating its folders. */
static void put(const char *rel, const char *text) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    for (char *s = path + strlen(root) + 1; (s = strchr(s, '/')) != NULL; s++) {
        *s = '\0';
        mkdir(path, 0755);
        *s = '/';
    }
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "%s", path);
    fputs(text, f);
    fclose(f);
}

static void make_root(void) {
    tu_tmpdir(root, sizeof root);
}

static void remove_root(void) {
    tu_rm_tree(root);
}

TestSuite(mm_state, .init = make_root, .fini = remove_root);

Test(mm_state, selected_choices_and_kdamonds_on) {
    put("kernel/mm/transparent_hugepage/enabled", "always [madvise] never\n");
    put("kernel/mm/transparent_hugepage/defrag", "always defer defer+madvise [madvise] never\n");
    put("kernel/mm/damon/admin/kdamonds/nr_kdamonds", "3\n");
    put("kernel/mm/damon/admin/kdamonds/0/state", "on\n");
    put("kernel/mm/damon/admin/kdamonds/0/contexts/0/operations", "paddr\n");
    put("kernel/mm/damon/admin/kdamonds/0/contexts/0/schemes/0/action", "pageout\n");
    put("kernel/mm/damon/admin/kdamonds/0/contexts/0/schemes/1/action", "lru_prio\n");
    put("kernel/mm/damon/admin/kdamonds/1/state", "off\n");
    put("kernel/mm/damon/admin/kdamonds/1/contexts/0/operations", "vaddr\n");
    struct mm_state s;
    mm_state_read(&s, root);
    cr_expect_str_eq(s.thp, "madvise");
    cr_expect_str_eq(s.thp_defrag, "madvise");
    cr_expect_eq(s.damon_on, 1);
    cr_expect_str_eq(s.damon, "kdamond 0 (paddr: pageout, lru_prio)");
    char line[384];
    mm_state_describe(&s, line, sizeof line);
    cr_expect_str_eq(
        line,
        "transparent huge pages madvise (defrag madvise); DAMON on: kdamond 0 (paddr: pageout, lru_prio)");
    put("kernel/mm/damon/admin/kdamonds/0/state", "off\n");
    put("kernel/mm/transparent_hugepage/enabled", "always madvise [never]\n");
    put("module/damon_reclaim/parameters/enabled", "N\n");
    mm_state_read(&s, root);
    mm_state_describe(&s, line, sizeof line);
    cr_expect_str_eq(line, "transparent huge pages never (defrag madvise); DAMON off");
}

/* DAMON's modules run kdamonds of their own, outside the admin interface's list: counted when enabled. */
Test(mm_state, enabled_modules_count) {
    put("kernel/mm/damon/admin/kdamonds/nr_kdamonds", "1\n");
    put("kernel/mm/damon/admin/kdamonds/0/state", "on\n");
    put("kernel/mm/damon/admin/kdamonds/0/contexts/0/operations", "vaddr\n");
    put("module/damon_reclaim/parameters/enabled", "Y\n");
    put("module/damon_lru_sort/parameters/enabled", "N\n");
    struct mm_state s;
    mm_state_read(&s, root);
    cr_expect_eq(s.damon_on, 2);
    cr_expect_str_eq(s.damon, "kdamond 0 (vaddr), damon_reclaim");
}

Test(mm_state, absent_tree_is_unknown_and_off) {
    struct mm_state s;
    mm_state_read(&s, "/nonexistent-sysfs");
    char line[384];
    mm_state_describe(&s, line, sizeof line);
    cr_expect_str_eq(line, "transparent huge pages unknown (defrag unknown); DAMON off");
    cr_expect_eq(s.damon_on, 0);
}

Test(mm_state, report_keeps_it) {
    struct run_report *a = calloc(1, sizeof *a), *b = calloc(1, sizeof *b);
    cr_assert(a && b);
    report_fixture_fill(a, 1.0);
    snprintf(a->prov.mm_state, sizeof a->prov.mm_state,
             "transparent huge pages madvise; DAMON on: kdamond 0");
    a->prov.damon_on = true;
    char *text = report_json_string(a);
    cr_assert_not_null(text);
    struct fr_err err = {{0}};
    cr_assert_eq(report_json_parse(text, strlen(text), "a", b, &err), 0, "%s", err.msg);
    cr_expect_str_eq(b->prov.mm_state, a->prov.mm_state);
    cr_expect(b->prov.damon_on);
    /* a run.json from before the keys: empty and off */
    cJSON *j = cJSON_Parse(text);
    cJSON_DeleteItemFromObject(cJSON_GetObjectItem(j, "provenance"), "mm_state");
    cJSON_DeleteItemFromObject(cJSON_GetObjectItem(j, "provenance"), "damon_on");
    char *old = cJSON_PrintUnformatted(j);
    cr_assert_eq(report_json_parse(old, strlen(old), "old", b, &err), 0, "%s", err.msg);
    cr_expect(b->prov.mm_state[0] == '\0' && !b->prov.damon_on);
    cJSON_Delete(j);
    free(text), free(old), free(a), free(b);
}
