/* SPDX-License-Identifier: MIT */
/*
 * Tries ioctl(1, TIOCSTI) — or, given "setd", ioctl(1, TIOCSETD) with the
 * line discipline fd 1 already has (harmless where it is allowed) — and
 * prints the errno name.  On a non-terminal fd an unfiltered kernel answers
 * ENOTTY; the sandbox's terminal filter answers EPERM before the tty layer
 * is reached.  Used by the integration tests.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>

int main(int argc, char **argv)
{
        char byte = 'x';
        int discipline = 0;
        int result;

        if (argc > 1 && strcmp(argv[1], "setd") == 0) {
                if (ioctl(1, TIOCGETD, &discipline) < 0)
                        discipline = 0;
                result = ioctl(1, TIOCSETD, &discipline);
        } else {
                result = ioctl(1, TIOCSTI, &byte);
        }
        if (result == 0) {
                puts(argc > 1 ? "set" : "injected");
                return 0;
        }
        puts(errno == EPERM ? "EPERM" : errno == ENOTTY ? "ENOTTY" : "other");
        return 0;
}
