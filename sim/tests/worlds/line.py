#!/usr/bin/env python3
# An unmodified python-ev3dev2 line follower (ev3-sim --world line):
# proportional on ColorSensor.reflected_light_intensity, the line's edge on
# the right, the turn limited to +-15 % (as examples/line_follower.rs):
# a loop that runs late (python on a busy machine) does not swing the sensor
# across the tape.
import time
from ev3dev2.motor import MoveTank, OUTPUT_B, OUTPUT_C, SpeedPercent
from ev3dev2.sensor import INPUT_3
from ev3dev2.sensor.lego import ColorSensor

tank = MoveTank(OUTPUT_B, OUTPUT_C)
light = ColorSensor(INPUT_3)
kp = 0.5
end = time.time() + 13
while time.time() < end:
    error = light.reflected_light_intensity - 50
    turn = max(-15, min(15, kp * error))
    tank.on(SpeedPercent(30 + turn), SpeedPercent(30 - turn))
    time.sleep(0.01)
tank.off()
print("DONE")
