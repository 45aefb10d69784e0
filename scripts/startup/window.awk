# The start-up window of an `strace -f` log: from the execve of the program
# (the first execve of the path `program`, given with -v, so that a wrapper
# such as seccomp-414 that execs it is left out; the first execve when
# empty) to its first write of a `run-...` command. Prints
# "syscalls openat getdents64" in that window, or "? ? ?" when the log has
# no such write. Shared by scripts/startup-bench and the ARM926 guest's
# start-up pass (scripts/arm-guest/run; busybox awk there).
/ execve\(/ && !started && (program == "" || index($0, "execve(\"" program "\"")) { started = 1 }
!started { next }
/<\.\.\. .* resumed>/ || /^[0-9]+ +(\+\+\+|---)/ { next }
{
    n++
    if ($0 ~ /(openat|open)\(/) opens++
    if ($0 ~ /getdents64\(/) scans++
}
/(pwrite64|write)\([0-9]+, "run-/ { printf "%d %d %d\n", n, opens, scans; found = 1; exit }
END { if (!found) print "? ? ?" }
