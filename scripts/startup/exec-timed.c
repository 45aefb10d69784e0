/* The start-up benchmark's launcher (scripts/startup-bench on a host,
 * scripts/arm-guest/run in the ARM926 guest): prints the wall-clock time as
 * "exec-ns N", then execs its arguments. The measured program prints
 * "first-command-ns N" right after its first motor command; the difference
 * is exec to first command. C, not a script: the guest has no python and
 * busybox's date has no nanoseconds, and nothing here runs after the
 * timestamp but the flush and the exec. */
#include <stdio.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    struct timespec now;
    if (argc < 2) {
        fprintf(stderr, "usage: exec-timed PROGRAM [ARG...]\n");
        return 2;
    }
    clock_gettime(CLOCK_REALTIME, &now);
    printf("exec-ns %lld%09ld\n", (long long)now.tv_sec, now.tv_nsec);
    fflush(stdout);
    execvp(argv[1], argv + 1);
    perror("exec-timed");
    return 127;
}
