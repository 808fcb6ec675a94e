/* SPDX-License-Identifier: MIT */
/*
 * landlock-run's parser over arbitrary command lines (the input's
 * NUL-separated pieces are the arguments after argv[0]).  Beyond memory
 * errors and UB it checks what the launch relies on: a failure is the
 * contract's 125; --probe, --help and --version come alone; a command
 * follows a `--` and is not empty; every grant names a piece of argv, and
 * so does every --protect path, which is canonical in form.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz-support.h"
#include "landlock-run-arguments.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
        (void) argc;
        (void) argv;
        return 0;
}

/* Each --mask or --mask-closed path (NULL: none given): a piece of argv, canonical in form. */
static void check_masks(char **argv, char **paths)
{
        for (char **path = paths; path && *path; path++)
                FUZZ_CHECK(fuzz_argv_contains(argv, *path) && (*path)[0] == '/' && !strstr(*path, "//") &&
                           !strstr(*path, "/../") && !strstr(*path, "/./"));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct launch_request request = { 0 };
        int argc;
        char **argv = fuzz_argv_new("landlock-run", data, size, &argc);
        int result = landlock_run_parse_arguments(argc, argv, &request);

        FUZZ_CHECK(request.probe + request.help + request.version <= 1);
        if (result == 0 && request.probe) {
                FUZZ_CHECK(argc == 2 && strcmp(argv[1], "--probe") == 0 && !request.command);
        } else if (result == 0 && (request.help || request.version)) {
                /* Beyond the upstream contract, and only alone: anywhere else both stay usage errors. */
                FUZZ_CHECK(argc == 2 && strcmp(argv[1], request.help ? "--help" : "--version") == 0);
                FUZZ_CHECK(!request.command && request.grant_count == 0);
        } else if (result == 0) {
                FUZZ_CHECK(request.command > argv + 1 && request.command < argv + argc && request.command[0]);
                FUZZ_CHECK(strcmp(request.command[-1], "--") == 0);
        } else {
                FUZZ_CHECK(result == LAUNCHER_FAILURE);
        }
        FUZZ_CHECK(request.grant_count <= (size_t) (argc - 1) / 2);
        for (size_t i = 0; i < request.grant_count; i++)
                FUZZ_CHECK(fuzz_argv_contains(argv, request.grants[i].path));
        /* A held-back path is one piece of argv, canonical in form: a name the supervisor can match. */
        FUZZ_CHECK(request.protected_count <= (size_t) (argc - 1) / 2);
        for (size_t i = 0; i < request.protected_count; i++) {
                const char *path = request.protected_paths[i];
                size_t length = strlen(path);

                FUZZ_CHECK(fuzz_argv_contains(argv, path));
                FUZZ_CHECK(path[0] == '/' && !strstr(path, "//") && !strstr(path, "/./") && !strstr(path, "/../"));
                /* No trailing slash (but "/" itself), no trailing "." or ".." component. */
                FUZZ_CHECK(length == 1 || path[length - 1] != '/');
                FUZZ_CHECK(!(length >= 2 && strcmp(path + length - 2, "/.") == 0));
                FUZZ_CHECK(!(length >= 3 && strcmp(path + length - 3, "/..") == 0));
        }
        /* A mask, like a held-back path, is one piece of argv canonical in form: a name the grant compares. */
        check_masks(argv, request.masked);
        check_masks(argv, request.mask_closed);
        free(request.masked);
        free(request.mask_closed);
        free(request.grants);
        free(request.variables);
        free(request.protected_paths);
        free(request.local_ports);
        free(request.deny_env);
        free(request.allow_env);
        fuzz_argv_free(argv);
        return 0;
}
