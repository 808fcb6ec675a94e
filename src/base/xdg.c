/* SPDX-License-Identifier: MIT */
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/xdg.h"

char *dsh_xdg_directory(const char *override_variable, const char *xdg_variable, const char *home_fallback)
{
        const char *override = override_variable ? getenv(override_variable) : NULL;
        const char *xdg = getenv(xdg_variable);
        const char *home = getenv("HOME");
        char *directory = NULL;
        int length;

        if (override && override[0])
                return strdup(override);
        if (xdg && xdg[0] == '/')
                length = asprintf(&directory, "%s/dsh-sandbox", xdg);
        else if (home && home[0] == '/')
                length = asprintf(&directory, "%s/%s/dsh-sandbox", home, home_fallback);
        else
                return NULL;
        return length < 0 ? NULL : directory;
}

char *dsh_passwd_home(void)
{
        FILE *file = fopen("/etc/passwd", "re");
        struct passwd *entry;
        char *home = NULL;

        if (!file)
                return NULL;
        while (!home && (entry = fgetpwent(file)))
                if (entry->pw_uid == geteuid())
                        home = strdup(entry->pw_dir);
        fclose(file);
        return home;
}
