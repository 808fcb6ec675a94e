/* SPDX-License-Identifier: MIT */
/*
 * Tries ioctl(1, TIOCSTI) and prints the errno name.  On a non-terminal fd an
 * unfiltered kernel answers ENOTTY; the sandbox's terminal filter answers
 * EPERM before the tty layer is reached.  Used by the integration tests.
 */
#include <errno.h>
#include <stdio.h>
#include <sys/ioctl.h>

int main(void)
{
        char byte = 'x';

        if (ioctl(1, TIOCSTI, &byte) == 0) {
                puts("injected");
                return 0;
        }
        puts(errno == EPERM ? "EPERM" : errno == ENOTTY ? "ENOTTY" : "other");
        return 0;
}
