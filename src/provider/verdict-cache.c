/* SPDX-License-Identifier: MIT */
/* The cross-process verdict cache: see verdict-cache.h for the key and the security argument. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <jansson.h>

#include "config.h"
#include "core/landlock.h"
#include "provider/verdict-cache.h"
#include "base/error.h"
#include "base/json-core.h"
#include "base/path.h"

#define VERDICT_FORMAT 1
/* A verdict file is a few KiB; anything much larger was not written here. */
#define VERDICT_FILE_MAX (1024 * 1024)

/* Host knobs that decide whether a runner can start, though no binary changes with them. */
static const char *const knob_files[] = {
        "/proc/sys/kernel/unprivileged_userns_clone",
        "/proc/sys/user/max_user_namespaces",
        "/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
        "/sys/kernel/security/lsm",
        "/proc/cmdline",   /* lsm=, apparmor= and friends: boot parameters no binary reflects */
        NULL,
};

static json_t *small_file_text(const char *path)
{
        char buffer[512];
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t length;

        if (fd < 0)
                return json_null();
        length = read(fd, buffer, sizeof(buffer) - 1);
        close(fd);
        if (length < 0)
                return json_null();
        buffer[length] = '\0';
        return json_stringn(buffer, strcspn(buffer, "\n"));
}

static json_t *binary_identity(const char *path)
{
        struct stat status;

        if (!path)
                return json_null();
        if (stat(path, &status) < 0)
                return json_pack("{s:s, s:b}", "path", path, "missing", 1);
        return json_pack("{s:s, s:I, s:I, s:I, s:I, s:I}", "path", path, "dev", (json_int_t) status.st_dev, "ino",
                         (json_int_t) status.st_ino, "mtime", (json_int_t) status.st_mtim.tv_sec, "mtimeNs",
                         (json_int_t) status.st_mtim.tv_nsec, "size", (json_int_t) status.st_size);
}

char *dsh_verdict_cache_key(dsh_provider *provider)
{
        json_t *key = json_object(), *knobs = json_object(), *chain = json_array();
        struct utsname host;
        char *text = NULL;

        if (!key || !knobs || !chain)
                goto done;
        if (uname(&host) < 0)
                memset(&host, 0, sizeof(host));
        json_object_set_new(key, "format", json_integer(VERDICT_FORMAT));
        json_object_set_new(key, "library", json_string(DSH_SANDBOX_VERSION));
        json_object_set_new(key, "euid", json_integer((json_int_t) geteuid()));
        json_object_set_new(key, "kernel", json_pack("{s:s, s:s}", "release", host.release, "version", host.version));
        json_object_set_new(key, "landlockAbi", json_integer(dsh_landlock_abi()));
        for (const char *const *file = knob_files; *file; file++)
                json_object_set_new(knobs, *file, small_file_text(*file));
        json_object_set(key, "knobs", knobs);
        for (size_t i = 0; i < provider->backend_count; i++) {
                const dsh_backend_ops *backend = provider->backends[i];
                char *runner = backend->runner_path ? backend->runner_path(provider) : NULL;

                json_array_append_new(chain, json_pack("{s:s, s:o}", "backend", provider->backends[i]->name,
                                                       "runner", binary_identity(runner)));
                free(runner);
        }
        json_object_set(key, "chain", chain);
        json_object_set_new(key, "probeTimeoutMs", json_integer(provider->probe_timeout_ms));
        text = json_dumps(key, JSON_COMPACT | JSON_SORT_KEYS);
done:
        json_decref(chain);
        json_decref(knobs);
        json_decref(key);
        return text;
}

/* FNV-1a: names the file of one chain configuration; not a security property. */
static uint64_t fnv1a(uint64_t hash, const char *text)
{
        for (; text && *text; text++) {
                hash ^= (unsigned char) *text;
                hash *= 0x100000001b3ULL;
        }
        return hash ^ 0xff;
}

char *dsh_verdict_cache_path(const dsh_provider *provider)
{
        uint64_t hash = 0xcbf29ce484222325ULL;
        char *path = NULL;

        if (!provider->verdict_cache_dir)
                return NULL;
        for (size_t i = 0; i < provider->backend_count; i++)
                hash = fnv1a(hash, provider->backends[i]->name);
        hash = fnv1a(hash, provider->bwrap_path);
        hash = fnv1a(hash, provider->landlock_run_path);
        if (asprintf(&path, "%s/verdict-%016llx.json", provider->verdict_cache_dir, (unsigned long long) hash) < 0)
                return NULL;
        return path;
}

/*
 * The cache file as JSON, or NULL when there is no usable one.  A confined
 * command of an earlier call may own the cache directory (a workspace of ~
 * covers ~/.cache), so what sits at the path is not trusted to be a file:
 * O_NONBLOCK keeps a FIFO from blocking the open (and so every later call),
 * O_NOFOLLOW keeps a symlink from pointing the read elsewhere, and anything
 * but a small regular file is ignored, which costs one probe.
 */
static json_t *load_cache_file(const char *path)
{
        dsh_autoclose int fd = path ? open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW) : -1;
        struct stat status;
        dsh_error ignored = DSH_ERROR_INIT;
        json_t *root = NULL;

        if (fd < 0 || fstat(fd, &status) < 0 || !S_ISREG(status.st_mode) || status.st_size > VERDICT_FILE_MAX)
                return NULL;
        /* Why a file is unusable does not matter here: it is a miss either way, and the probe runs again. */
        dsh_json_load_object_fd(fd, VERDICT_FILE_MAX, "verdict cache", &root, &ignored);
        dsh_error_clear(&ignored);
        return root;
}

/*
 * The stored verdict into `*name_out`, decoded strictly (json-core.h): {"key":{...},"selected":"name"}
 * and nothing else.  Any other shape is a miss (-ENOENT), never a guess at what a stranger's file
 * meant; -ENOMEM when out of memory.
 */
static int stored_verdict(const json_t *root, const json_t *expected_key, char **name_out)
{
        static const char *const keys[] = { "key", "selected", NULL };
        dsh_error ignored = DSH_ERROR_INIT;
        dsh_json_decoder decoder = { "verdict cache", &ignored };
        const json_t *stored_key = NULL;
        char *name = NULL;
        int result = dsh_json_check_object(&decoder, root, &dsh_json_root, keys);

        if (result == 0)
                result = dsh_json_find_member(&decoder, root, &dsh_json_root, "key", DSH_JSON_REQUIRED, &stored_key);
        if (result == 0)
                result = dsh_json_decode_string_member(&decoder, root, &dsh_json_root, "selected",
                                                       DSH_JSON_REQUIRED | DSH_JSON_TEXT_NON_EMPTY |
                                                       DSH_JSON_TEXT_SINGLE_LINE, &name);
        if (result < 0 && ignored.errno_value == ENOMEM)
                result = -ENOMEM;
        else if (result < 0 || !json_equal(stored_key, expected_key))
                result = -ENOENT;
        dsh_error_clear(&ignored);
        if (result < 0) {
                free(name);
                return result;
        }
        *name_out = name;
        return 0;
}

int dsh_verdict_cache_read(const char *path, const char *key, char **selected)
{
        dsh_error ignored = DSH_ERROR_INIT;
        json_t *root = load_cache_file(path), *expected = NULL;
        int result = -ENOENT;

        *selected = NULL;
        if (key)
                dsh_json_load_object(key, strlen(key), "verdict key", &expected, &ignored);
        dsh_error_clear(&ignored);
        if (root && expected)
                result = stored_verdict(root, expected, selected);
        json_decref(expected);
        json_decref(root);
        return result;
}

int dsh_verdict_cache_write(const char *path, const char *key, const char *selected)
{
        dsh_autofree char *directory = NULL;
        dsh_autofree char *temporary = NULL;
        json_t *root = NULL, *parsed_key;
        char *slash;
        int fd, result;

        if (!path || !key || !selected)
                return -EINVAL;
        directory = strdup(path);
        if (!directory)
                return -ENOMEM;
        slash = strrchr(directory, '/');
        if (!slash || slash == directory)
                return -EINVAL;
        *slash = '\0';
        result = dsh_path_make_directories(directory, 0700);
        if (result < 0)
                return result;
        /*
         * This process is not confined, and a confined command of an earlier
         * call may own a directory on the way (a workspace of ~ covers ~/.cache):
         * a symlink there would make this write land wherever it points.
         */
        if (!dsh_path_has_no_symlinks(directory))
                return -ELOOP;
        if (asprintf(&temporary, "%s.XXXXXX", path) < 0) {
                temporary = NULL;
                return -ENOMEM;
        }
        fd = mkostemp(temporary, O_CLOEXEC);
        if (fd < 0)
                return -errno;
        parsed_key = json_loads(key, 0, NULL);
        if (parsed_key)
                root = json_pack("{s:o, s:s}", "key", parsed_key, "selected", selected);
        result = root && json_dumpfd(root, fd, JSON_COMPACT | JSON_SORT_KEYS) == 0 ? 0 : -EIO;
        json_decref(root);
        if (close(fd) < 0 && result == 0)
                result = -errno;
        /* rename() replaces the entry in one step: a concurrent reader sees the old or the new file, never half. */
        if (result == 0 && rename(temporary, path) < 0)
                result = -errno;
        if (result < 0)
                unlink(temporary);
        return result;
}

void dsh_verdict_cache_drop(const char *path)
{
        if (path)
                unlink(path);
}
