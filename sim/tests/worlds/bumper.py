#!/usr/bin/env python3
# An unmodified python-ev3dev2 bumper program: drive until the touch sensor
# is pressed (ev3-sim --world bumper: a wall ahead).
from ev3dev2.motor import MoveTank, OUTPUT_B, OUTPUT_C, SpeedPercent
from ev3dev2.sensor import INPUT_1
from ev3dev2.sensor.lego import TouchSensor

tank = MoveTank(OUTPUT_B, OUTPUT_C)
bumper = TouchSensor(INPUT_1)
tank.on(SpeedPercent(50), SpeedPercent(50))
pressed = bumper.wait_for_pressed(timeout_ms=10000)
tank.off()
print("PRESSED" if pressed else "TIMEOUT")
