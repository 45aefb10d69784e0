#!/usr/bin/env python3
"""Prints the wall-clock time, then execs its arguments: the start of the
start-up measurement, as close to the exec as a launcher gets."""
import os
import sys
import time

print("exec-ns", time.time_ns(), flush=True)
os.execvp(sys.argv[1], sys.argv[1:])
