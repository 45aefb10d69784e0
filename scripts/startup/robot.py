#!/usr/bin/env python3
"""The start-up benchmark's robot program in python-ev3dev2 (the same as
examples/startup.rs): two large motors (outA, outB) and a touch sensor (in1)
found by port, a stop at exit (python-ev3dev2 has no stop guard: atexit and
SIGINT/SIGTERM handlers are the nearest), the first run command, the
wall-clock time right after it, a stop."""
import atexit
import signal
import sys
import time

from ev3dev2.motor import OUTPUT_A, OUTPUT_B, MoveTank, SpeedPercent
from ev3dev2.sensor import INPUT_1
from ev3dev2.sensor.lego import TouchSensor

tank = MoveTank(OUTPUT_A, OUTPUT_B)
bumper = TouchSensor(INPUT_1)
atexit.register(tank.off)
for sig in (signal.SIGINT, signal.SIGTERM):
    signal.signal(sig, lambda *_: sys.exit(1))
tank.on(SpeedPercent(50), SpeedPercent(50))
print("first-command-ns", time.time_ns(), flush=True)
tank.off()
