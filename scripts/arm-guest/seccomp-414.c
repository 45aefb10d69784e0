/*
 * seccomp-414 PROGRAM [ARGS...]: runs PROGRAM under a seccomp filter that
 * answers ENOSYS for every ARM EABI syscall newer than Linux 4.14 (numbers
 * from 398, rseq, up to ARM's private range at 0xf0000), like the EV3's
 * ev3dev-stretch kernel (4.14) does: clock_gettime64 (403) included, so
 * musl 1.2.3 falls back to clock_gettime (263) as on a brick. The filter is
 * inherited by every child and thread. Part of the guest test run
 * (scripts/arm-guest/run).
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_ARM, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 398, 0, 2),
		BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0xf0000, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(code) / sizeof(code[0]), code };

	if (argc < 2) {
		fprintf(stderr, "usage: %s PROGRAM [ARGS...]\n", argv[0]);
		return 2;
	}
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
		fprintf(stderr, "seccomp-414: %s\n", strerror(errno));
		return 126;
	}
	execvp(argv[1], argv + 1);
	fprintf(stderr, "seccomp-414: %s: %s\n", argv[1], strerror(errno));
	return 127;
}
