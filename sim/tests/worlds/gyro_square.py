#!/usr/bin/env python3
# An unmodified python-ev3dev2 gyro square (ev3-sim --world empty): four
# sides of 300 mm (56 mm wheels: 614 degrees), turns by MoveTank's
# gyro-driven turn_right.
from ev3dev2.motor import MoveTank, OUTPUT_B, OUTPUT_C, SpeedPercent
from ev3dev2.sensor import INPUT_2
from ev3dev2.sensor.lego import GyroSensor

tank = MoveTank(OUTPUT_B, OUTPUT_C)
tank.gyro = GyroSensor(INPUT_2)
tank.gyro.reset()
for side in range(4):
    tank.on_for_degrees(SpeedPercent(30), SpeedPercent(30), 614)
    # error_margin=0: stop on the degree (the default, 2, stops 2 short).
    tank.turn_right(SpeedPercent(10), 90, error_margin=0)
print("ANGLE", tank.gyro.angle)
