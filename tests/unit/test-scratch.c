/* SPDX-License-Identifier: MIT */
/*
 * The session's scratch (src/provider/scratch.c): concurrent first calls of
 * one key — threads of one process, as a serve's calls are — all open the
 * same scratch, none fails on the owner record another is writing; a key
 * recorded for someone else is refused.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "provider/scratch.h"
#include "test-support.h"

#define THREADS 8
#define ROUNDS 40

struct opener {
        pthread_barrier_t *start;
        const char *base;
        const dsh_policy *policy;
        int result;
        char message[256];
};

static void *open_scratch(void *data)
{
        struct opener *opener = data;
        dsh_scratch scratch = DSH_SCRATCH_INIT;
        dsh_error error = DSH_ERROR_INIT;

        pthread_barrier_wait(opener->start);
        opener->result = dsh_scratch_open(opener->base, opener->policy, &scratch, &error);
        if (opener->result < 0)
                snprintf(opener->message, sizeof(opener->message), "%s", error.message ? error.message : "?");
        dsh_error_clear(&error);
        dsh_scratch_clear(&scratch);
        return NULL;
}

static void test_concurrent_first_calls_share_one_scratch(void **state)
{
        char *base = test_make_directory(NULL);

        (void) state;
        for (int round = 0; round < ROUNDS; round++) {
                char workspace[64];
                dsh_policy policy = DSH_POLICY_INIT;
                struct opener openers[THREADS];
                pthread_t threads[THREADS];
                pthread_barrier_t start;

                snprintf(workspace, sizeof(workspace), "/var/tmp/dsh-scratch-round-%d", round);
                policy.mode = DSH_MODE_WORKSPACE_WRITE;
                policy.workspace_root = workspace;
                assert_int_equal(pthread_barrier_init(&start, NULL, THREADS), 0);
                for (int i = 0; i < THREADS; i++) {
                        openers[i] = (struct opener) { &start, base, &policy, 0, "" };
                        assert_int_equal(pthread_create(&threads[i], NULL, open_scratch, &openers[i]), 0);
                }
                for (int i = 0; i < THREADS; i++) {
                        assert_int_equal(pthread_join(threads[i], NULL), 0);
                        if (openers[i].result != 0)
                                fail_msg("round %d, thread %d: %s", round, i, openers[i].message);
                }
                pthread_barrier_destroy(&start);
        }
        test_remove_tree(base);
}

static void test_a_key_recorded_for_another_is_refused(void **state)
{
        char *base = test_make_directory(NULL);
        dsh_policy policy = DSH_POLICY_INIT;
        dsh_scratch scratch = DSH_SCRATCH_INIT;
        dsh_error error = DSH_ERROR_INIT;
        char *owner = NULL;
        FILE *record;

        (void) state;
        policy.mode = DSH_MODE_WORKSPACE_WRITE;
        policy.workspace_root = (char *) "/var/tmp/dsh-scratch-owned";
        assert_int_equal(dsh_scratch_open(base, &policy, &scratch, &error), 0);
        assert_true(asprintf(&owner, "%s/../owner", scratch.temp_path) > 0);
        dsh_scratch_clear(&scratch);
        record = fopen(owner, "w");
        assert_non_null(record);
        fputs("workspace /somewhere/else\n", record);
        fclose(record);
        assert_true(dsh_scratch_open(base, &policy, &scratch, &error) < 0);
        assert_int_equal(error.code, DSH_ERROR_SANDBOX_INVALID_TEMP_ROOT);
        assert_non_null(strstr(error.message, "recorded for another"));
        dsh_error_clear(&error);
        dsh_scratch_clear(&scratch);
        free(owner);
        test_remove_tree(base);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_concurrent_first_calls_share_one_scratch),
                cmocka_unit_test(test_a_key_recorded_for_another_is_refused),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
