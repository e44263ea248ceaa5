/* The bundle's `rlm-studio` on Linux: holds SIGINT, then runs the frozen program beside it.
 *
 * The frozen program's interpreter installs its own SIGINT handler early in its start, long
 * before the app's first line runs (the bootloader's own modules and runtime hooks come in
 * between): a Ctrl+C there ends in "Failed to execute script" with a traceback and exit 1.
 * A blocked signal stays pending across exec (the bootloader's restart of itself included);
 * the app's first lines (app/__init__.py) put the app's handler in place and unblock it, so a
 * Ctrl+C anywhere in the start is taken by the app: exit 130. Before sigprocmask() below
 * SIGINT has its default action: the process dies of SIGINT (the shell's $? is 130) with
 * nothing started.
 *
 * Built by packaging/build.sh:  cc -O2 -o dist/rlm-studio/rlm-studio packaging/launcher.c
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define FROZEN "rlm-studio-bin"     /* PyInstaller's executable, in this launcher's folder */

int main(int argc, char **argv)
{
    sigset_t held;
    char path[PATH_MAX];
    ssize_t n;
    char *slash;

    (void)argc;
    sigemptyset(&held);
    sigaddset(&held, SIGINT);
    if (sigprocmask(SIG_BLOCK, &held, NULL) != 0) {
        fprintf(stderr, "rlm-studio: cannot hold SIGINT: %s\n", strerror(errno));
        return 1;
    }
    /* This launcher's real folder (a symlink such as ~/.local/bin/rlm-studio resolved). */
    n = readlink("/proc/self/exe", path, sizeof path - 1);
    if (n < 0) {
        fprintf(stderr, "rlm-studio: cannot find this program's folder: %s\n", strerror(errno));
        return 1;
    }
    path[n] = '\0';
    slash = strrchr(path, '/');
    if (slash == NULL || (size_t)(slash + 1 - path) + sizeof FROZEN > sizeof path) {
        fprintf(stderr, "rlm-studio: this program's path is too long: %s\n", path);
        return 1;
    }
    strcpy(slash + 1, FROZEN);
    execv(path, argv);
    fprintf(stderr, "rlm-studio: cannot start %s: %s\n", path, strerror(errno));
    return 127;
}
